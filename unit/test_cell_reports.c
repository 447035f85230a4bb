/* cell/cell_reports.c: bwrap's info and the launcher's refusal status. */
#include <string.h>

#include "cell/cell_reports.h"
#include "unit.h"

static pid_t info(const char *text) {
  return cell_reports_child_pid(text, strlen(text));
}

static void the_init_pid_is_read_strictly(void **state) {
  (void)state;
  assert_int_equal(info("{\"child-pid\": 4242}"), 4242);
  assert_int_equal(info("{\"child-pid\": 4242, \"cgroup-namespace\": 4026531835}"), 4242);
  static const char *const none[] = {
      "",
      "{}",
      "{\"child-pid\": 1}",
      "{\"child-pid\": 0}",
      "{\"child-pid\": -5}",
      "{\"child-pid\": 2147483648}",
      "{\"child-pid\": \"42\"}",
      "{\"child-pid\": 4.2}",
      "{\"child-pid\": 42, \"child-pid\": 43}",
      "{\"child-pid\": 42} trailing",
      "[42]",
      "{\"a\":{\"b\":{\"c\":{\"d\":{\"e\":1}}}},\"child-pid\":42}",
  };
  for (size_t i = 0; i < sizeof none / sizeof *none; i++)
    if (info(none[i]) != 0) fail_msg("read a pid from %s", none[i]);
}

static cap_code status(const char *text, cap_error *err) {
  memset(err, 0, sizeof *err);
  return cell_reports_launcher_status(text, strlen(text), err);
}

static void a_refusal_is_always_a_failure(void **state) {
  (void)state;
  cap_error err;
  assert_int_equal(status("{\"code\":\"LAUNCH_SOURCE_MISMATCH\",\"message\":\"guest changed\"}", &err),
                   CAP_E_LAUNCH_SOURCE_MISMATCH);
  assert_non_null(strstr(err.message, "guest changed"));
  static const char *const launch_failed[] = {
      "",
      "{}",
      "{\"code\":\"OK\",\"message\":\"m\"}",
      "{\"code\":\"NOPE\",\"message\":\"m\"}",
      "{\"code\":7}",
      "not json",
      "{\"code\":\"INTERNAL\"",
  };
  for (size_t i = 0; i < sizeof launch_failed / sizeof *launch_failed; i++) {
    cap_code rc = status(launch_failed[i], &err);
    if (rc != CAP_E_LAUNCH_FAILED || err.code != rc) fail_msg("%s: %s", launch_failed[i], cap_code_name(rc));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(the_init_pid_is_read_strictly),
      cmocka_unit_test(a_refusal_is_always_a_failure),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
