/* admit/call_result.c: what a guest's call.result may carry. */
#include <string.h>

#include "admit/call_result.h"
#include "admit/config.h"
#include "unit.h"

static cap_code admit(const char *text, json_t **result) {
  host_config cfg;
  config_defaults(&cfg);
  cfg.limits.max_json_nodes = 8;
  json_t *r = unit_json(text);
  cap_error err = {0};
  *result = NULL;
  cap_code rc = call_result_admit(r, &cfg.limits, result, &err);
  json_decref(r);
  return rc;
}

static void results(void **state) {
  (void)state;
  json_t *res;
  assert_int_equal(admit("{\"type\":\"call.result\",\"isError\":false,\"output\":{\"a\":1}}", &res), CAP_OK);
  json_t *want = unit_json("{\"isError\":false,\"output\":{\"a\":1}}");
  assert_true(json_equal(res, want));
  json_decref(want);
  json_decref(res);
  assert_int_equal(admit("{\"type\":\"call.result\",\"isError\":true,\"message\":\"no\"}", &res), CAP_OK);
  assert_string_equal(json_string_value(json_object_get(res, "message")), "no");
  json_decref(res);
  static const char *const violations[] = {
      "{\"type\":\"call.result\",\"output\":1}",
      "{\"type\":\"call.result\",\"isError\":0,\"output\":1}",
      "{\"type\":\"call.result\",\"isError\":false,\"output\":1,\"extra\":1}",
      "{\"type\":\"call.result\",\"isError\":true,\"output\":1}",
      "{\"type\":\"call.result\",\"isError\":true,\"message\":7}",
  };
  for (size_t i = 0; i < sizeof violations / sizeof *violations; i++) {
    if (admit(violations[i], &res) != CAP_E_PROTOCOL_VIOLATION) fail_msg("%s", violations[i]);
    assert_null(res);
  }
  assert_int_equal(admit("{\"type\":\"call.result\",\"isError\":false,\"output\":[1,2,3,4,5,6,7,8,9]}", &res),
                   CAP_E_JSON_LIMIT);
  assert_null(res);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(results)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
