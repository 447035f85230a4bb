/* Shared setup of the C unit tests (cmocka): JSON from text, and the
 * includes cmocka needs before its own header. */
#ifndef UNIT_H
#define UNIT_H

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static inline json_t *unit_json(const char *text) {
  json_error_t e;
  json_t *v = json_loads(text, JSON_DECODE_ANY, &e);
  if (!v) fail_msg("bad test JSON: %s: %s", e.text, text);
  return v;
}

/* rule must accept every string of ok and refuse every string of bad
 * (both NULL-terminated). */
static inline void unit_rule_table(bool (*rule)(const char *), const char *what, const char *const *ok,
                                   const char *const *bad) {
  for (; *ok; ok++)
    if (!rule(*ok)) fail_msg("refused %s %s", what, *ok);
  for (; *bad; bad++)
    if (rule(*bad)) fail_msg("accepted %s %s", what, *bad);
}

#endif
