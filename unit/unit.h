/* Shared setup of the C unit tests (cmocka): JSON from text, and the
 * includes cmocka needs before its own header. */
#ifndef UNIT_H
#define UNIT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>

static inline json_t *unit_json(const char *text) {
  json_error_t e;
  json_t *v = json_loads(text, JSON_DECODE_ANY, &e);
  if (!v) fail_msg("bad test JSON: %s: %s", e.text, text);
  return v;
}

#endif
