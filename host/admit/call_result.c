#include "call_result.h"

#include <string.h>

#include "config.h"
#include "strict_json.h"

cap_code call_result_admit(const json_t *r, const host_limits *lim, json_t **result, cap_error *err) {
  static const char *const ok_keys[] = {"type", "isError", "output", NULL};
  static const char *const err_keys[] = {"type", "isError", "message", NULL};
  json_t *is_error = json_object_get(r, "isError");
  if (!json_is_boolean(is_error))
    return cap_fail(err, CAP_E_PROTOCOL_VIOLATION, "call.result.isError must be a boolean");
  bool failed = json_is_true(is_error);
  if (!sj_keys(r, failed ? err_keys : ok_keys, failed ? err_keys : ok_keys, CAP_E_PROTOCOL_VIOLATION,
               "call.result", err))
    return err->code;
  if (failed) {
    const char *msg;
    if (!sj_string(r, "message", &msg, CAP_E_PROTOCOL_VIOLATION, "call.result", err)) return err->code;
    if ((long long)strlen(msg) > lim->max_description_bytes * 16)
      return cap_fail(err, CAP_E_PROTOCOL_VIOLATION, "call.result.message is too long");
    *result = json_pack("{s:b,s:s}", "isError", 1, "message", msg);
    return CAP_OK;
  }
  sj_limits jl = {(size_t)lim->max_json_depth, (size_t)lim->max_json_nodes};
  json_t *output = json_object_get(r, "output");
  if (!sj_within(output, &jl))
    return cap_fail(err, CAP_E_JSON_LIMIT, "call.result.output exceeds maxJsonDepth/maxJsonNodes");
  *result = json_pack("{s:b,s:O}", "isError", 0, "output", output);
  return CAP_OK;
}
