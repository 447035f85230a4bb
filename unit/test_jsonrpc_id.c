/* jsonrpc_id_recover: the id of a refused line, exactly when the line is
 * JSON with one id that can be given back as sent. */
#include <string.h>

#include "serve/jsonrpc_id.h"
#include "unit.h"

static json_t *recover(const char *line) {
  return jsonrpc_id_recover(line, strlen(line), 1 << 20);
}

static void expect_id(const char *line, const char *want_json) {
  json_t *id = recover(line);
  if (!id) fail_msg("no id recovered from %s", line);
  json_t *want = unit_json(want_json);
  if (!json_equal(id, want)) fail_msg("wrong id from %s", line);
  json_decref(want);
  json_decref(id);
}

static void expect_none(const char *line) {
  json_t *id = recover(line);
  if (id) fail_msg("an id was recovered from %s", line);
}

static void refused_valid_json_keeps_its_id(void **state) {
  (void)state;
  expect_id("{\"id\":\"x3\",\"p\":{\"a\":1,\"a\":2}}", "\"x3\""); /* duplicate keys */
  expect_id("{\"id\":5,\"p\":{\"\\u0000\":1}}", "5");             /* NUL in a key */
  expect_id("{\"id\":6,\"p\":\"\\ud800\"}", "6");                 /* lone surrogate */
  expect_id("{\"id\":7,\"p\":\"\\udc00\\ud800x\"}", "7");
  expect_id("{\"id\":8,\"p\":123456789012345678901234567890}", "8");                /* past int64 */
  expect_id("{\"\\u0069d\":9}", "9");                                               /* an escaped key */
  expect_id("{\"id\":\"\\ud83d\\ude00\",\"p\":\"\\ud800\"}", "\"\\ud83d\\ude00\""); /* a valid pair */
  expect_id("{\"p\":\"\\\\u0000\",\"id\":-3}", "-3");                               /* an escaped backslash */
  expect_id("{\"id\" : 9007199254740993,\"p\":{\"a\":1,\"a\":2}}", "9007199254740993"); /* exact past 2^53 */
}

static void no_id_that_cannot_be_given_back(void **state) {
  (void)state;
  expect_none("{\"id\":1,\"p\":1\0}"); /* strlen stops: a syntax error */
  expect_none("{\"id\":\"\\ud800\"}"); /* the id held the refused escape */
  expect_none("{\"id\":1,\"id\":2}");  /* two ids */
  expect_none("{\"id\":1,\"\\u0069d\":2}");
  expect_none("{\"id\":1.5}");
  expect_none("{\"id\":1.0,\"p\":{\"a\":1,\"a\":2}}"); /* a real: not given back as 1 */
  expect_none("{\"id\":-0.0,\"p\":{\"a\":1,\"a\":2}}");
  expect_none("{\"id\":-0,\"p\":{\"a\":1,\"a\":2}}"); /* would come back as 0 */
  expect_none("{\"id\":1e2,\"p\":{\"a\":1,\"a\":2}}");
  expect_none("{\"id\":9007199254740993,\"p\":1e999999}");              /* past 2^53, beside a bad number */
  expect_none("{\"id\":92233720368547758070,\"p\":{\"a\":1,\"a\":2}}"); /* past int64 */
  expect_none("{\"id\":null}");
  expect_none("{\"id\":[1]}");
  expect_none("[{\"id\":1}]");
  expect_none("{\"id\":1");
  expect_none("{\"p\":{\"id\":1}}"); /* only a nested id */
  expect_none("");
}

static void a_raw_nul_is_not_json(void **state) {
  (void)state;
  const char line[] = "{\"id\":1,\"p\":1\0}";
  assert_null(jsonrpc_id_recover(line, sizeof line - 1, 1 << 20));
}

static void the_budget_bounds_the_read(void **state) {
  (void)state;
  const char *line = "{\"id\":1,\"p\":[{},{},{},{},{},{},{},{}]}";
  assert_null(jsonrpc_id_recover(line, strlen(line), 64));
  json_t *id = jsonrpc_id_recover(line, strlen(line), 1 << 20);
  assert_non_null(id);
  json_decref(id);
}

static void expect_call(const char *line, bool is_call, const char *tool) {
  jsonrpc_refused r = jsonrpc_id_recover_refused(line, strlen(line), 1 << 20);
  if (r.tools_call != is_call) fail_msg("tools_call %d for %s", r.tools_call, line);
  const char *named = r.tool ? json_string_value(r.tool) : "?";
  if (tool && strcmp(named, tool) != 0) fail_msg("tool %s for %s", named, line);
  jsonrpc_id_refused_free(&r);
}

/* Issue 47.1: a refused tools/call is known as one, for its audit line. */
static void a_refused_tools_call_is_known(void **state) {
  (void)state;
  expect_call("{\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"t\",\"a\":1,\"a\":2}}", true, "t");
  expect_call("{\"method\":\"tools/call\",\"params\":{\"x\":\"\\ud800\"}}", true, "?");
  expect_call("{\"method\":\"tools\\/call\",\"params\":{\"a\":1,\"a\":2}}", true, "?"); /* an escape */
  expect_call("{\"method\":\"tools/call\",\"method\":\"ping\",\"p\":{\"a\":1,\"a\":2}}", true, NULL);
  expect_call("{\"method\":\"ping\",\"p\":{\"method\":\"tools/call\",\"a\":1,\"a\":2}}", false, NULL);
  expect_call("{\"method\":[\"tools/call\"],\"p\":{\"a\":1,\"a\":2}}", false, NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(refused_valid_json_keeps_its_id), cmocka_unit_test(no_id_that_cannot_be_given_back),
      cmocka_unit_test(a_raw_nul_is_not_json),           cmocka_unit_test(a_refused_tools_call_is_known),
      cmocka_unit_test(the_budget_bounds_the_read),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
