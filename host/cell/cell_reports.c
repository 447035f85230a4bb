#include "cell_reports.h"

#include <stdint.h>

#include "strict_json.h"

/* bwrap's info and the launcher's status are small flat objects: the
 * strict parser with tight limits, like every other document. */
static const sj_limits report_limits = {4, 32};

pid_t cell_reports_child_pid(const char *buf, size_t len) {
  cap_error ignored = {0};
  json_t *v = sj_parse(buf, len, &report_limits, CAP_E_LAUNCH_FAILED, "bwrap info", &ignored);
  json_t *pid = json_object_get(v, "child-pid");
  json_int_t n = json_is_integer(pid) ? json_integer_value(pid) : 0;
  json_decref(v);
  return n > 1 && n <= INT32_MAX ? (pid_t)n : 0;
}

cap_code cell_reports_launcher_status(const char *buf, size_t len, cap_error *err) {
  cap_error ignored = {0};
  json_t *v = sj_parse(buf, len, &report_limits, CAP_E_LAUNCH_FAILED, "launcher status", &ignored);
  const char *code = json_string_value(json_object_get(v, "code"));
  const char *msg = json_string_value(json_object_get(v, "message"));
  cap_code cc = code ? cap_code_from_name(code) : CAP_OK;
  if (cc == CAP_OK) cc = CAP_E_LAUNCH_FAILED;
  cap_fail(err, cc, "launcher: %s", msg ? msg : "failed without a message");
  json_decref(v);
  return cc;
}
