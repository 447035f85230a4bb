/* The strict parser: NUL bytes refused before jansson reads the text, and
 * the parse bounded by a budget derived from the node limit. */
#include <stdlib.h>
#include <string.h>

#include "strict_json.h"
#include "unit.h"

static cap_code parse(const char *buf, size_t len, size_t max_nodes, cap_error *err) {
  sj_limits lim = {32, max_nodes};
  json_t *v = sj_parse(buf, len, &lim, CAP_E_FRAME_INVALID_JSON, "doc", err);
  json_decref(v);
  return v ? CAP_OK : err->code;
}

static void a_nul_byte_anywhere_is_refused(void **state) {
  (void)state;
  static const char *const docs[] = {"123\0", "[1\0]", "{\"a\":1\0}", "true\0", "null\0 ", "[\"a\"]\0"};
  static const size_t lens[] = {4, 4, 8, 5, 6, 6};
  for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
    cap_error err = {0};
    assert_int_equal(parse(docs[i], lens[i], 100, &err), CAP_E_FRAME_INVALID_JSON);
    assert_non_null(strstr(err.message, "NUL byte at byte"));
  }
}

static void refusals_of_valid_json_stay(void **state) {
  (void)state;
  static const char *const docs[] = {"{\"a\":1,\"a\":1}", "[\"\\u0000\"]", "[\"\\ud800\"]",
                                     "[9223372036854775808]", "[-9223372036854775809]"};
  for (size_t i = 0; i < sizeof docs / sizeof *docs; i++) {
    cap_error err = {0};
    assert_int_equal(parse(docs[i], strlen(docs[i]), 100, &err), CAP_E_FRAME_INVALID_JSON);
  }
  cap_error err = {0};
  assert_int_equal(parse("[9223372036854775807,-9223372036854775808]", 42, 100, &err), CAP_OK);
}

/* n copies of item in an array. */
static char *array_of(const char *item, size_t n, size_t *len) {
  size_t il = strlen(item);
  char *b = malloc(n * (il + 1) + 2);
  size_t o = 0;
  b[o++] = '[';
  for (size_t i = 0; i < n; i++) {
    if (i) b[o++] = ',';
    memcpy(b + o, item, il);
    o += il;
  }
  b[o++] = ']';
  *len = o;
  return b;
}

static void the_parse_is_bounded_while_it_runs(void **state) {
  (void)state;
  size_t len;
  char *flood = array_of("{}", 200000, &len);
  cap_error err = {0};
  assert_int_equal(parse(flood, len, 1000, &err), CAP_E_JSON_LIMIT);
  assert_non_null(strstr(err.message, "while parsing"));
  free(flood);
  /* Within the limit, the costliest node (an empty object) still parses. */
  char *fits = array_of("{\"k\":{}}", 4999, &len);
  cap_error ok = {0};
  assert_int_equal(parse(fits, len, 10000, &ok), CAP_OK);
  free(fits);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_nul_byte_anywhere_is_refused),
      cmocka_unit_test(refusals_of_valid_json_stay),
      cmocka_unit_test(the_parse_is_bounded_while_it_runs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
