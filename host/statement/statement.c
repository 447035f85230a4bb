#include "statement.h"

#include <stdio.h>
#include <string.h>

#include "digest.h"
#include "statement_schema.h"
#include "statement_values.h"
#include "strict_json.h"

json_t *statement_new(json_t *subjects, const char *predicate_type, json_t *predicate) {
  return json_pack("{s:s,s:o,s:s,s:o}", "_type", STATEMENT_TYPE, "subject", subjects, "predicateType",
                   predicate_type, "predicate", predicate);
}

void statement_add_subject(json_t *subjects, const char *name, const char *sha256) {
  json_array_append_new(subjects, json_pack("{s:s,s:{s:s}}", "name", name, "digest", "sha256", sha256));
}

cap_code statement_read(const unsigned char *payload, size_t len, json_t **statement, cap_error *err) {
  *statement = NULL;
  static const char *const keys[] = {"_type", "subject", "predicateType", "predicate", NULL};
  sj_limits lim = {64, 200000};
  json_t *s = sj_parse_as((const char *)payload, len, &lim, CAP_E_STATEMENT_INVALID, "statement", err);
  if (!s) return err->code;
  const char *type, *ptype;
  cap_code rc = CAP_OK;
  if (!sj_keys(s, keys, keys, CAP_E_STATEMENT_INVALID, "statement", err) ||
      !sj_string(s, "_type", &type, CAP_E_STATEMENT_INVALID, "statement", err) ||
      !sj_string(s, "predicateType", &ptype, CAP_E_STATEMENT_INVALID, "statement", err))
    rc = err->code;
  else if (strcmp(type, STATEMENT_TYPE) != 0)
    rc = cap_fail(err, CAP_E_STATEMENT_INVALID, "_type is \"%.100s\", not " STATEMENT_TYPE, type);
  else if (strcmp(ptype, WORLD_PREDICATE_TYPE) != 0 && strcmp(ptype, VSA_PREDICATE_TYPE) != 0 &&
           strcmp(ptype, RELEASE_PREDICATE_TYPE) != 0)
    rc = cap_fail(err, CAP_E_PREDICATE_UNSUPPORTED,
                  "predicateType \"%.200s\" is not one this host states (" WORLD_PREDICATE_TYPE
                  ", " VSA_PREDICATE_TYPE ", " RELEASE_PREDICATE_TYPE ")",
                  ptype);
  if (!rc) rc = statement_values_check_subjects(json_object_get(s, "subject"), err);
  if (!rc) rc = statement_values_check_predicate(ptype, json_object_get(s, "predicate"), err);
  if (rc)
    json_decref(s);
  else
    *statement = s;
  return rc;
}

static bool has_subject(const json_t *list, const json_t *subject) {
  size_t i;
  json_t *s;
  json_array_foreach(list, i, s) if (json_equal(s, subject)) return true;
  return false;
}

cap_code statement_subjects_match(const json_t *statement, const json_t *want, cap_error *err) {
  const json_t *got = json_object_get(statement, "subject");
  size_t i;
  json_t *s;
  json_array_foreach(want, i, s) if (!has_subject(got, s)) return cap_fail(
      err, CAP_E_SUBJECT_MISMATCH, "the statement does not name %s with sha256 %s",
      json_string_value(json_object_get(s, "name")),
      json_string_value(json_object_get(json_object_get(s, "digest"), "sha256")));
  json_array_foreach(got, i, s) if (!has_subject(want, s)) return cap_fail(
      err, CAP_E_SUBJECT_MISMATCH,
      "the statement names %.200s (sha256 %.64s), which the "
      "config does not admit",
      json_string_value(json_object_get(s, "name")),
      json_string_value(json_object_get(json_object_get(s, "digest"), "sha256")));
  return CAP_OK;
}

cap_code statement_names_subject(const json_t *statement, const char *name, const char *sha256,
                                 cap_error *err) {
  size_t i;
  const json_t *s;
  json_array_foreach(json_object_get(statement, "subject"), i, s) {
    const char *n = json_string_value(json_object_get(s, "name"));
    if (strcmp(n, name) != 0) continue;
    const char *d = json_string_value(json_object_get(json_object_get(s, "digest"), "sha256"));
    if (strcmp(d, sha256) == 0) return CAP_OK;
    return cap_fail(err, CAP_E_SUBJECT_MISMATCH,
                    "%.200s has sha256 %s here, but the statement names "
                    "sha256 %s: this is not the file that was signed",
                    name, sha256, d);
  }
  return cap_fail(
      err, CAP_E_SUBJECT_MISMATCH, "the statement names no subject %.200s (it names %.200s)", name,
      json_string_value(json_object_get(json_array_get(json_object_get(statement, "subject"), 0), "name")));
}

static void diff(const char *path, const json_t *a, const json_t *b, json_t *drift) {
  if (json_equal(a, b)) return;
  if (json_is_object(a) && json_is_object(b)) {
    const char *k;
    json_t *v;
    char sub[512];
    json_object_foreach((json_t *)a, k, v) {
      snprintf(sub, sizeof sub, "%s%s%s", path, path[0] ? "." : "", k);
      diff(sub, v, json_object_get(b, k), drift);
    }
    json_object_foreach((json_t *)b, k, v) if (!json_object_get(a, k)) {
      snprintf(sub, sizeof sub, "%s%s%s", path, path[0] ? "." : "", k);
      json_array_append_new(drift, json_string(sub));
    }
    return;
  }
  json_array_append_new(drift, json_string(path));
}

void statement_world_drift(const json_t *attested, const json_t *now, json_t *drift) {
  json_t *a = json_deep_copy(attested), *b = json_deep_copy(now);
  for (const schema_row *r = statement_schema_world; r->path; r++)
    if (!r->compared) statement_schema_remove(a, r->path), statement_schema_remove(b, r->path);
  diff("", a, b, drift);
  json_decref(a);
  json_decref(b);
}
