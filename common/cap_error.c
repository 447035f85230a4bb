#include "cap_error.h"

#include <stdio.h>
#include <string.h>

#include "safe_text.h"

static const char *const code_names[CAP_E_COUNT] = {[CAP_OK] = "OK",
#define CAP_NAME_ENTRY(name) [CAP_E_##name] = #name,
                                                    CAP_ERROR_CODES(CAP_NAME_ENTRY)
#undef CAP_NAME_ENTRY
};

const char *cap_code_name(cap_code code) {
  if ((int)code < 0 || code >= CAP_E_COUNT) return "INTERNAL";
  return code_names[code];
}

cap_code cap_code_from_name(const char *name) {
  for (int i = 1; i < CAP_E_COUNT; i++)
    if (strcmp(code_names[i], name) == 0) return (cap_code)i;
  return CAP_OK;
}

/* Formats wide, then keeps what fits as safe text: a message quotes
 * untrusted bytes, and must still encode as JSON and stay one log line. */
static void set_message(cap_error *err, const char *fmt, va_list ap) {
  char wide[4 * sizeof err->message];
  int n = vsnprintf(wide, sizeof wide, fmt, ap);
  size_t len = n < 0 ? 0 : (size_t)n < sizeof wide ? (size_t)n : sizeof wide - 1;
  safe_text(err->message, sizeof err->message, wide, len);
}

cap_code cap_vfail(cap_error *err, cap_code code, const char *fmt, va_list ap) {
  if (err && err->code == CAP_OK) {
    err->code = code;
    set_message(err, fmt, ap);
  }
  return code;
}

cap_code cap_fail(cap_error *err, cap_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cap_vfail(err, code, fmt, ap);
  va_end(ap);
  return code;
}

cap_code cap_override(cap_error *err, cap_code code, const char *fmt, ...) {
  if (!err) return code;
  cap_error fresh = {.code = code};
  va_list ap;
  va_start(ap, fmt); /* the new message may quote the one it replaces */
  set_message(&fresh, fmt, ap);
  va_end(ap);
  *err = fresh;
  return code;
}
