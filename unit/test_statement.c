/* statement/statement.c: in-toto statements read strictly, subjects
 * matched as sets, and world drift named field by field; and
 * statement_schema_build: a predicate built from its rows. */
#include <string.h>

#include "statement/statement.h"
#include "statement/statement_schema.h"
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

/* Stand-in sources for the summary's rows: a failed or passed result,
 * with or without a world, and a writer that knows every source or one
 * that does not know inputAttestations' (an optional row). */
typedef struct {
  bool failed, world, knows_inputs, drops_time;
} fake_sources;

static bool fake_value(const schema_row *row, void *ctx, json_t **out) {
  const fake_sources *f = ctx;
  switch (row->from) {
    case SRC_VERIFIER_ID: return statement_schema_give(out, json_string(VSA_VERIFIER_ID));
    case SRC_HOST_VERSION: return statement_schema_give(out, json_string("0.1.0"));
    case SRC_HOST_SHA256:
    case SRC_POLICY_SHA256: return statement_schema_give(out, json_string(SHA));
    case SRC_TIME_NOW:
      return statement_schema_give(out, f->drops_time ? NULL : json_string("2026-12-03T00:00:00Z"));
    case SRC_RESOURCE_URI:
    case SRC_POLICY_URI: return statement_schema_give(out, json_string("file:///x"));
    case SRC_INPUT_ATTESTATIONS:
      return f->knows_inputs &&
             statement_schema_give(out, f->world ? json_pack("[{s:s}]", "uri", "file:///w") : NULL);
    case SRC_RESULT: return statement_schema_give(out, json_string(f->failed ? "FAILED" : "PASSED"));
    case SRC_LEVELS: return statement_schema_give(out, json_pack("[s]", f->failed ? "FAILED" : "L"));
    case SRC_FAILURE_CODE: return statement_schema_give(out, f->failed ? json_string("USAGE") : NULL);
    case SRC_FAILURE_MESSAGE: return statement_schema_give(out, f->failed ? json_string("m") : NULL);
    default: return false;
  }
}

static void a_predicate_is_built_from_its_rows(void **state) {
  (void)state;
  cap_error err = {0};
  json_t *out = NULL;
  fake_sources failed = {true, true, true, false}, passed = {false, false, true, false};
  assert_int_equal(statement_schema_build(statement_schema_summary, fake_value, &failed, "t", &out, &err),
                   CAP_OK);
  assert_string_equal(json_string_value(statement_schema_at(out, "verifier/version/capsule-host")), "0.1.0");
  assert_string_equal(json_string_value(statement_schema_at(out, "policy/digest/sha256")), SHA);
  assert_string_equal(json_string_value(statement_schema_at(out, "failure/code")), "USAGE");
  assert_int_equal(json_array_size(statement_schema_at(out, "inputAttestations")), 1);
  json_decref(out);
  /* An optional object whose members are absent is not made; an absent
   * optional field is left out. */
  assert_int_equal(statement_schema_build(statement_schema_summary, fake_value, &passed, "t", &out, &err),
                   CAP_OK);
  assert_null(json_object_get(out, "failure"));
  assert_null(json_object_get(out, "inputAttestations"));
  assert_int_equal(json_object_size(out), 6);
  statement_schema_remove(out, "policy/uri");
  assert_null(statement_schema_at(out, "policy/uri"));
  assert_non_null(statement_schema_at(out, "policy/digest"));
  json_decref(out);
}

static void a_row_without_its_writers_source_is_refused_never_left_out(void **state) {
  (void)state;
  cap_error err = {0};
  json_t *out = (json_t *)1;
  /* inputAttestations is optional: a writer that does not know its source
   * must still not leave it out in silence. */
  fake_sources unknown = {false, false, false, false};
  assert_int_equal(statement_schema_build(statement_schema_summary, fake_value, &unknown, "t", &out, &err),
                   CAP_E_INTERNAL);
  assert_null(out);
  assert_non_null(strstr(err.message, "no source for inputAttestations"));
}

static void a_required_value_absent_is_internal(void **state) {
  (void)state;
  cap_error err = {0};
  json_t *out = NULL;
  fake_sources no_time = {false, false, true, true};
  assert_int_equal(statement_schema_build(statement_schema_summary, fake_value, &no_time, "t", &out, &err),
                   CAP_E_INTERNAL);
  assert_non_null(strstr(err.message, "no value for timeVerified"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(statements),
      cmocka_unit_test(subjects_match_as_sets),
      cmocka_unit_test(drift_names_each_field_but_the_observed),
      cmocka_unit_test(a_predicate_is_built_from_its_rows),
      cmocka_unit_test(a_row_without_its_writers_source_is_refused_never_left_out),
      cmocka_unit_test(a_required_value_absent_is_internal)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
