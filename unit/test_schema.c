/* The inputSchema subset: what schema_check admits, and what
 * schema_validate then accepts or refuses. */
#include "admit/schema.h"
#include "unit.h"

static void check_table(void **state) {
  (void)state;
  static const char *const ok[] = {
      "{\"type\":\"object\"}",
      "{\"type\":\"object\",\"properties\":{\"t\":{\"type\":\"string\",\"maxLength\":3}},"
      "\"required\":[\"t\"],\"additionalProperties\":false}",
      "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":[\"integer\",\"null\"],\"minimum\":0}}}", NULL};
  static const char *const bad[] = {"{\"type\":\"array\"}",
                                    "{}",
                                    "{\"type\":\"object\",\"$ref\":\"#\"}",
                                    "{\"type\":\"object\",\"properties\":{\"t\":{\"type\":\"strin\"}}}",
                                    "{\"type\":\"object\",\"properties\":{\"t\":{\"maxLength\":-1}}}",
                                    "{\"type\":\"object\",\"pattern\":\"a\"}",
                                    NULL};
  for (const char *const *s = ok; *s; s++) {
    json_t *v = unit_json(*s);
    cap_error err = {0};
    if (schema_check(v, &err) != CAP_OK) fail_msg("refused %s: %s", *s, err.message);
    json_decref(v);
  }
  for (const char *const *s = bad; *s; s++) {
    json_t *v = unit_json(*s);
    cap_error err = {0};
    if (schema_check(v, &err) == CAP_OK) fail_msg("accepted %s", *s);
    assert_int_equal(err.code, CAP_E_SCHEMA_INVALID);
    json_decref(v);
  }
}

static void validate_table(void **state) {
  (void)state;
  json_t *schema = unit_json(
      "{\"type\":\"object\",\"properties\":{\"t\":{\"type\":\"string\",\"maxLength\":3},"
      "\"n\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":9},"
      "\"e\":{\"enum\":[\"a\",1]},\"xs\":{\"type\":\"array\",\"items\":{\"type\":\"boolean\"},"
      "\"maxItems\":2}},\"required\":[\"t\"],\"additionalProperties\":false}");
  cap_error err = {0};
  assert_int_equal(schema_check(schema, &err), CAP_OK);
  static const char *const ok[] = {"{\"t\":\"abc\"}", "{\"t\":\"\",\"n\":9,\"e\":1,\"xs\":[true]}", NULL};
  static const char *const bad[] = {"{}",
                                    "{\"t\":\"abcd\"}",
                                    "{\"t\":1}",
                                    "{\"t\":\"a\",\"n\":0}",
                                    "{\"t\":\"a\",\"n\":1.5}",
                                    "{\"t\":\"a\",\"e\":\"b\"}",
                                    "{\"t\":\"a\",\"xs\":[true,false,true]}",
                                    "{\"t\":\"a\",\"xs\":[1]}",
                                    "{\"t\":\"a\",\"extra\":1}",
                                    "[]",
                                    NULL};
  for (const char *const *s = ok; *s; s++) {
    json_t *v = unit_json(*s);
    cap_error e = {0};
    if (schema_validate(schema, v, &e) != CAP_OK) fail_msg("refused %s: %s", *s, e.message);
    json_decref(v);
  }
  for (const char *const *s = bad; *s; s++) {
    json_t *v = unit_json(*s);
    cap_error e = {0};
    if (schema_validate(schema, v, &e) == CAP_OK) fail_msg("accepted %s", *s);
    assert_int_equal(e.code, CAP_E_INPUT_INVALID);
    json_decref(v);
  }
  json_decref(schema);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(check_table), cmocka_unit_test(validate_table)};
  return cmocka_run_group_tests_name("schema", tests, NULL, NULL);
}
