#include "verdict.h"

json_t *verdict_result(json_t *result) {
  return json_pack("{s:b,s:o}", "ok", 1, "result", result);
}

json_t *verdict_snapshot(json_t *snapshot) {
  return json_pack("{s:b,s:o}", "ok", 1, "snapshot", snapshot);
}

json_t *verdict_recycled(void) {
  return json_pack("{s:b,s:b}", "ok", 0, "recycled", 1);
}

json_t *verdict_error(cap_code code, const char *message, bool idle) {
  json_t *v =
      json_pack("{s:b,s:{s:s,s:s}}", "ok", 0, "error", "code", cap_code_name(code), "message", message);
  if (v && idle) json_object_set_new(v, "idle", json_true());
  return v;
}

static const char *const success_key[] = {[VERDICT_RESULT] = "result", [VERDICT_SNAPSHOT] = "snapshot"};

static cap_code malformed(verdict_reading *out, const char *why) {
  out->kind = VERDICT_ERROR;
  out->code = CAP_E_INTERNAL;
  out->message = why;
  return out->code;
}

cap_code verdict_read(const json_t *v, verdict_kind expected, verdict_reading *out) {
  *out = (verdict_reading){VERDICT_ERROR, CAP_E_INTERNAL, "", NULL, false};
  if (!json_is_object(v)) return malformed(out, "the supervisor reported no verdict");
  bool ok = json_is_true(json_object_get(v, "ok"));
  if (ok && (expected == VERDICT_RESULT || expected == VERDICT_SNAPSHOT)) {
    const json_t *payload = json_object_get(v, success_key[expected]);
    if (!json_is_object(payload)) return malformed(out, "the supervisor's verdict is not the one expected");
    *out = (verdict_reading){expected, CAP_OK, "", payload, false};
    return CAP_OK;
  }
  if (!ok && json_is_true(json_object_get(v, "recycled"))) {
    if (expected != VERDICT_RECYCLED)
      return malformed(out, "a warm cell was recycled where a call's verdict was expected");
    *out = (verdict_reading){VERDICT_RECYCLED, CAP_OK, "", NULL, false};
    return CAP_OK;
  }
  if (ok) return malformed(out, "the supervisor's verdict is not the one expected");
  const json_t *e = json_object_get(v, "error");
  const char *name = json_string_value(json_object_get(e, "code"));
  const char *msg = json_string_value(json_object_get(e, "message"));
  cap_code code = name ? cap_code_from_name(name) : CAP_OK;
  if (code == CAP_OK || !msg) return malformed(out, "the supervisor reported no outcome");
  *out = (verdict_reading){VERDICT_ERROR, code, msg, NULL, json_is_true(json_object_get(v, "idle"))};
  return code;
}
