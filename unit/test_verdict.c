/* call/verdict.c: a supervisor's verdict has one encoding and one reading,
 * and nothing a reader does not expect is ever success. */
#include <string.h>

#include "call/verdict.h"
#include "unit.h"

static cap_code read_text(const char *text, verdict_kind expected, verdict_reading *v, json_t **keep) {
  *keep = unit_json(text);
  return verdict_read(*keep, expected, v);
}

static void encodings_read_back(void **state) {
  (void)state;
  verdict_reading v;
  json_t *r = verdict_result(unit_json("{\"isError\":false,\"output\":1}"));
  assert_int_equal(verdict_read(r, VERDICT_RESULT, &v), CAP_OK);
  assert_int_equal(v.kind, VERDICT_RESULT);
  assert_true(json_is_object(v.payload) && json_integer_value(json_object_get(v.payload, "output")) == 1);
  json_decref(r);
  json_t *s = verdict_snapshot(unit_json("{\"path\":\"/s\",\"sha256\":\"aa\"}"));
  assert_int_equal(verdict_read(s, VERDICT_SNAPSHOT, &v), CAP_OK);
  json_decref(s);
  json_t *c = verdict_recycled();
  assert_int_equal(verdict_read(c, VERDICT_RECYCLED, &v), CAP_OK);
  json_decref(c);
  json_t *e = verdict_error(CAP_E_CELL_CALL_TIMEOUT, "too slow", true);
  assert_int_equal(verdict_read(e, VERDICT_RESULT, &v), CAP_E_CELL_CALL_TIMEOUT);
  assert_string_equal(v.message, "too slow");
  assert_true(v.idle && v.kind == VERDICT_ERROR);
  json_decref(e);
}

/* Every reader of the old code treated an unknown code its own way; two
 * read it as success. Now each of these is INTERNAL, whatever is expected. */
static void nothing_unexpected_is_success(void **state) {
  (void)state;
  static const char *const bad[] = {
      "{}",
      "[]",
      "null",
      "{\"ok\":true}",
      "{\"ok\":\"true\",\"result\":{}}",
      "{\"ok\":true,\"result\":[]}",
      "{\"ok\":false}",
      "{\"ok\":false,\"error\":{}}",
      "{\"ok\":false,\"error\":{\"code\":\"NOT_A_CODE\",\"message\":\"m\"}}",
      "{\"ok\":false,\"error\":{\"code\":\"OK\",\"message\":\"m\"}}",
      "{\"ok\":false,\"error\":{\"code\":\"BUSY\"}}",
      "{\"ok\":false,\"error\":{\"code\":7,\"message\":\"m\"}}",
  };
  const verdict_kind kinds[] = {VERDICT_RESULT, VERDICT_SNAPSHOT, VERDICT_RECYCLED};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    for (size_t k = 0; k < 3; k++) {
      verdict_reading v;
      json_t *keep;
      cap_code rc = read_text(bad[i], kinds[k], &v, &keep);
      if (rc != CAP_E_INTERNAL || v.code != rc || !v.message[0])
        fail_msg("%s as kind %zu: %s", bad[i], k, cap_code_name(rc));
      json_decref(keep);
    }
  assert_int_equal(verdict_read(NULL, VERDICT_RESULT, &(verdict_reading){0}), CAP_E_INTERNAL);
}

static void another_success_is_not_the_expected_one(void **state) {
  (void)state;
  verdict_reading v;
  json_t *keep;
  assert_int_equal(read_text("{\"ok\":false,\"recycled\":true}", VERDICT_RESULT, &v, &keep), CAP_E_INTERNAL);
  json_decref(keep);
  assert_int_equal(read_text("{\"ok\":true,\"result\":{}}", VERDICT_SNAPSHOT, &v, &keep), CAP_E_INTERNAL);
  json_decref(keep);
  assert_int_equal(read_text("{\"ok\":true,\"snapshot\":{}}", VERDICT_RESULT, &v, &keep), CAP_E_INTERNAL);
  json_decref(keep);
  assert_int_equal(read_text("{\"ok\":true,\"result\":{}}", VERDICT_RECYCLED, &v, &keep), CAP_E_INTERNAL);
  json_decref(keep);
  /* A documented error code is that error, for every reader. */
  assert_int_equal(read_text("{\"ok\":false,\"error\":{\"code\":\"CALL_CANCELLED\",\"message\":\"m\"}}",
                             VERDICT_RECYCLED, &v, &keep),
                   CAP_E_CALL_CANCELLED);
  json_decref(keep);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(encodings_read_back),
      cmocka_unit_test(nothing_unexpected_is_success),
      cmocka_unit_test(another_success_is_not_the_expected_one),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
