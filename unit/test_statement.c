/* attest/statement.c: in-toto statements read strictly, subjects matched
 * as sets, and world drift named field by field. */
#include <string.h>

#include "statement/statement.h"
#include "unit.h"

#define SHA "abababababababababababababababababababababababababababababababab"
#define SUBJECT "{\"name\":\"x.cap/guest.mjs\",\"digest\":{\"sha256\":\"" SHA "\"}}"
#define VSA_AFTER_ID                                                                                                \
  "\",\"version\":{\"capsule-host\":\"0.1.0\",\"capsule-host.sha256\":\"" SHA                                       \
  "\"}},"                                                                                                           \
  "\"timeVerified\":\"2026-12-03T00:00:00Z\",\"resourceUri\":\"file:///x\",\"policy\":{\"uri\":\"file:///c.json\"," \
  "\"digest\":{\"sha256\":\"" SHA                                                                                   \
  "\"}},\"verificationResult\":\"PASSED\",\"verifiedLevels\":[\"DSH_CAPSULE_ADMITTED_V1\"]}"
#define VSA "{\"verifier\":{\"id\":\"" VSA_VERIFIER_ID VSA_AFTER_ID
#define OTHER_VSA "{\"verifier\":{\"id\":\"v" VSA_AFTER_ID

static cap_code read_text(const char *text, json_t **s) {
  cap_error err = {0};
  cap_code rc = statement_read((const unsigned char *)text, strlen(text), s, &err);
  if (rc != err.code) fail_msg("code %d, err %d", rc, err.code);
  return rc;
}

static void statements(void **state) {
  (void)state;
  json_t *s;
  assert_int_equal(read_text("{\"_type\":\"" STATEMENT_TYPE "\",\"subject\":[" SUBJECT
                             "],\"predicateType\":\"" VSA_PREDICATE_TYPE "\",\"predicate\":" VSA "}",
                             &s),
                   CAP_OK);
  json_decref(s);
  struct {
    const char *text;
    cap_code code;
  } bad[] = {
      {"{\"_type\":\"" STATEMENT_TYPE "\",\"subject\":[],\"predicateType\":\"" VSA_PREDICATE_TYPE
       "\",\"predicate\":" VSA "}",
       CAP_E_STATEMENT_INVALID},
      {"{\"_type\":\"" STATEMENT_TYPE
       "\",\"subject\":[{\"name\":\"a\",\"digest\":{\"sha256\":\"ab\"}}],\"predicateType\":\"" VSA_PREDICATE_TYPE
       "\",\"predicate\":" VSA "}",
       CAP_E_STATEMENT_INVALID},
      {"{\"_type\":\"" STATEMENT_TYPE "\",\"subject\":[" SUBJECT
       "],\"predicateType\":\"https://slsa.dev/verification_summary/v0.2\",\"predicate\":" VSA "}",
       CAP_E_PREDICATE_UNSUPPORTED},
      {"{\"_type\":\"" STATEMENT_TYPE "\",\"subject\":[" SUBJECT "],\"predicateType\":\"" VSA_PREDICATE_TYPE
       "\",\"predicate\":{}}",
       CAP_E_STATEMENT_INVALID},
      {"{\"_type\":\"" STATEMENT_TYPE "\",\"subject\":[" SUBJECT "],\"predicateType\":\"" VSA_PREDICATE_TYPE
       "\",\"predicate\":" VSA ",\"x\":1}",
       CAP_E_STATEMENT_INVALID},
      {"{\"_type\":\"" STATEMENT_TYPE "\",\"subject\":[" SUBJECT "],\"predicateType\":\"" WORLD_PREDICATE_TYPE
       "\",\"predicate\":{}}",
       CAP_E_STATEMENT_INVALID},
      {"not json", CAP_E_STATEMENT_INVALID},
      /* a summary is this host's word only */
      {"{\"_type\":\"" STATEMENT_TYPE "\",\"subject\":[" SUBJECT "],\"predicateType\":\"" VSA_PREDICATE_TYPE
       "\",\"predicate\":" OTHER_VSA "}",
       CAP_E_STATEMENT_INVALID},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cap_code rc = read_text(bad[i].text, &s);
    if (rc != bad[i].code) fail_msg("case %zu: %s", i, cap_code_name(rc));
    assert_null(s);
  }
}

static void subjects_match_as_sets(void **state) {
  (void)state;
  json_t *s = unit_json(
      "{\"subject\":[{\"name\":\"a\",\"digest\":{\"sha256\":\"1\"}},"
      "{\"name\":\"b\",\"digest\":{\"sha256\":\"2\"}}]}");
  json_t *same = unit_json(
      "[{\"name\":\"b\",\"digest\":{\"sha256\":\"2\"}},{\"name\":\"a\",\"digest\":{\"sha256\":\"1\"}}]");
  json_t *fewer = unit_json("[{\"name\":\"a\",\"digest\":{\"sha256\":\"1\"}}]");
  json_t *other = unit_json(
      "[{\"name\":\"a\",\"digest\":{\"sha256\":\"9\"}},{\"name\":\"b\",\"digest\":{\"sha256\":\"2\"}}]");
  cap_error err = {0};
  assert_int_equal(statement_subjects_match(s, same, &err), CAP_OK);
  assert_int_equal(statement_subjects_match(s, fewer, &err), CAP_E_SUBJECT_MISMATCH);
  memset(&err, 0, sizeof err);
  assert_int_equal(statement_subjects_match(s, other, &err), CAP_E_SUBJECT_MISMATCH);
  assert_non_null(strstr(err.message, "9"));
  json_decref(s), json_decref(same), json_decref(fewer), json_decref(other);
}

static void drift_names_each_field_but_the_observed(void **state) {
  (void)state;
  json_t *a = unit_json(
      "{\"node\":{\"path\":\"/a\",\"sha256\":\"1\"},\"bwrap\":{\"sha256\":\"2\"},"
      "\"observed\":{\"ino\":1}}");
  json_t *b = unit_json(
      "{\"node\":{\"path\":\"/b\",\"sha256\":\"1\",\"extra\":0},\"bwrap\":{\"sha256\":\"2\"},"
      "\"observed\":{\"ino\":2}}");
  json_t *drift = json_array();
  statement_world_drift(a, a, drift);
  assert_int_equal(json_array_size(drift), 0);
  statement_world_drift(a, b, drift);
  json_t *want = unit_json("[\"node.path\",\"node.extra\"]");
  assert_true(json_equal(drift, want));
  json_decref(a), json_decref(b), json_decref(drift), json_decref(want);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(statements), cmocka_unit_test(subjects_match_as_sets),
                                     cmocka_unit_test(drift_names_each_field_but_the_observed)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
