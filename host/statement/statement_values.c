#include "statement_values.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "digest.h"
#include "file_uri.h"
#include "safe_open.h"
#include "statement_schema.h"
#include "statement_types.h"

static const char *const kind_text[] = {
    [V_OBJECT] = "an object",
    [V_ARRAY] = "an array",
    [V_NAMES] = "an array of distinct non-empty strings with no control character",
    [V_SHA256] = "a sha256: 64 lowercase hex digits",
    [V_ABS_PATH] = "a normal absolute path",
    [V_TEXT] = "a string with no control character",
    [V_NAME] = "a non-empty string with no control character",
    [V_BOOL] = "true or false",
    [V_COUNT] = "an integer from 0 to 2^53",
    [V_COUNT_OR_NULL] = "null or an integer from 0 to 2^53",
    [V_TIME] = "an RFC 3339 time in UTC, such as 2026-12-03T16:00:00Z",
    [V_FILE_URI] = "an absolute file:// URI, percent-encoded as this host writes it",
    [V_NODE_VERSION] = "a Node version such as v20.20.2",
    [V_SCOPE] = "\"denied\" or \"allowed\"",
    [V_CODE] = "a stable error code of docs/ERRORS.md",
    [V_ANY] = "anything",
};

#define MAX_SAFE (1LL << 53)

__attribute__((format(printf, 2, 3))) static cap_code invalid(cap_error *err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cap_vfail(err, CAP_E_STATEMENT_INVALID, fmt, ap);
  va_end(ap);
  return CAP_E_STATEMENT_INVALID;
}

static bool printable(const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    if (*p < 0x20 || *p == 0x7f || (*p == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0)) return false;
  return true;
}

static bool digits(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

static int number(const char *s, size_t n) {
  int v = 0;
  for (size_t i = 0; i < n; i++) v = v * 10 + (s[i] - '0');
  return v;
}

static bool rfc3339_utc(const char *s) {
  static const int days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  size_t len = strlen(s);
  if (len < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' ||
      !digits(s, 4) || !digits(s + 5, 2) || !digits(s + 8, 2) || !digits(s + 11, 2) || !digits(s + 14, 2) ||
      !digits(s + 17, 2))
    return false;
  int year = number(s, 4), month = number(s + 5, 2), day = number(s + 8, 2);
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (month < 1 || month > 12 || day < 1 || day > days[month - 1] || (month == 2 && day == 29 && !leap) ||
      number(s + 11, 2) > 23 || number(s + 14, 2) > 59 || number(s + 17, 2) > 60)
    return false;
  const char *rest = s + 19;
  if (*rest == '.') {
    size_t f = strspn(rest + 1, "0123456789");
    if (f == 0 || f > 9) return false;
    rest += 1 + f;
  }
  return strcmp(rest, "Z") == 0; /* UTC, as RFC 13 says: no other offset, no missing zone */
}

static bool node_version(const char *s) {
  if (*s++ != 'v') return false;
  for (int part = 0; part < 3; part++) {
    size_t n = strspn(s, "0123456789");
    if (n == 0 || n > 6) return false;
    s += n;
    if (part < 2 && *s++ != '.') return false;
  }
  return *s == '\0' || ((*s == '-' || *s == '+') &&
                        strspn(s + 1,
                               "abcdefghijklmnopqrstuvwxyz"
                               "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") == strlen(s + 1) &&
                        s[1]);
}

static bool is_count(const json_t *v) {
  return json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= MAX_SAFE;
}

static bool distinct_names(const json_t *v) {
  size_t i, j;
  json_t *a, *b;
  if (!json_is_array(v)) return false;
  json_array_foreach(v, i, a) {
    const char *s = json_string_value(a);
    if (!s || !*s || !printable(s)) return false;
    json_array_foreach(v, j, b) if (j < i && strcmp(s, json_string_value(b)) == 0) return false;
  }
  return true;
}

static bool value_fits(const json_t *v, value_kind kind) {
  const char *s = json_string_value(v);
  char path[4200];
  switch (kind) {
    case V_OBJECT: return json_is_object(v);
    case V_ARRAY: return json_is_array(v);
    case V_NAMES: return distinct_names(v);
    case V_SHA256: return s && digest_is_sha256_hex(s);
    case V_ABS_PATH: return s && strlen(s) <= 4096 && printable(s) && so_is_plain_absolute(s);
    case V_TEXT: return s && printable(s);
    case V_NAME: return s && *s && printable(s);
    case V_BOOL: return json_is_boolean(v);
    case V_COUNT: return is_count(v);
    case V_COUNT_OR_NULL: return json_is_null(v) || is_count(v);
    case V_TIME: return s && rfc3339_utc(s);
    case V_FILE_URI: return s && file_uri_path(s, path, sizeof path);
    case V_NODE_VERSION: return s && node_version(s);
    case V_SCOPE: return s && (strcmp(s, "denied") == 0 || strcmp(s, "allowed") == 0);
    case V_CODE: return s && cap_code_from_name(s) != CAP_OK;
    case V_ANY: return true;
  }
  return false;
}

static const schema_row *row_for(const schema_row *rows, const char *pattern) {
  for (const schema_row *r = rows; r->path; r++)
    if (strcmp(r->path, pattern) == 0) return r;
  return NULL;
}

/* "a/b" + "c" -> "a/b/c" ("" + "c" -> "c"); false when it does not fit. */
static bool join(char *out, size_t size, const char *parent, const char *name) {
  int n = snprintf(out, size, "%s%s%s", parent, parent[0] ? "/" : "", name);
  return n >= 0 && (size_t)n < size;
}

static cap_code check(const schema_row *rows, const json_t *v, const char *pattern, const char *where,
                      cap_error *err);

static cap_code check_object(const schema_row *rows, const json_t *v, const char *pattern, const char *where,
                             cap_error *err) {
  char child_pattern[256], child_where[512], any[256];
  const char *key;
  json_t *member;
  json_object_foreach((json_t *)v, key, member) {
    int n = snprintf(child_where, sizeof child_where, "%s.%s", where, key);
    if (!join(child_pattern, sizeof child_pattern, pattern, key) || !join(any, sizeof any, pattern, "*") ||
        n < 0 || (size_t)n >= sizeof child_where)
      return invalid(err, "%.200s: a field name too long", where);
    const char *use = row_for(rows, child_pattern) ? child_pattern : row_for(rows, any) ? any : NULL;
    if (!use) return invalid(err, "%.200s.%.100s: a field RFC 13 does not define", where, key);
    if (check(rows, member, use, child_where, err)) return err->code;
  }
  /* Every required field of this object. */
  size_t plen = strlen(pattern);
  for (const schema_row *r = rows; r->path; r++) {
    if (!r->required || (plen && (strncmp(r->path, pattern, plen) != 0 || r->path[plen] != '/'))) continue;
    const char *name = plen ? r->path + plen + 1 : r->path; /* within the row's path: its prefix matched */
    if (strchr(name, '/') || strcmp(name, "*") == 0 || strcmp(name, "[]") == 0) continue;
    if (!json_object_get(v, name)) return invalid(err, "%.200s.%.100s is missing", where, name);
  }
  return CAP_OK;
}

static cap_code check(const schema_row *rows, const json_t *v, const char *pattern, const char *where,
                      cap_error *err) {
  const schema_row *r = row_for(rows, pattern);
  if (!r || !value_fits(v, r->kind)) {
    const char *s = json_string_value(v);
    return invalid(err, "%.200s is %s%.120s%s: it must be %s", where, s ? "\"" : "",
                   s                    ? s
                   : json_is_null(v)    ? "null"
                   : json_is_number(v)  ? "a number"
                   : json_is_boolean(v) ? "a boolean"
                   : json_is_array(v)   ? "an array"
                   : json_is_object(v)  ? "an object"
                                        : "?",
                   s ? "\"" : "", r ? kind_text[r->kind] : "defined");
  }
  if (r->kind == V_OBJECT) return check_object(rows, v, pattern, where, err);
  if (r->kind == V_ARRAY) {
    char child_pattern[256], child_where[512];
    size_t i;
    json_t *e;
    if (!join(child_pattern, sizeof child_pattern, pattern, "[]"))
      return invalid(err, "%.200s: too deep", where);
    json_array_foreach(v, i, e) {
      snprintf(child_where, sizeof child_where, "%s[%zu]", where, i);
      if (check(rows, e, child_pattern, child_where, err)) return err->code;
    }
  }
  return CAP_OK;
}

/* RFC 13: no number in a statement is a fraction or past 2^53 (a
 * JavaScript reader would round it), wherever it stands. */
static cap_code check_numbers(const json_t *v, const char *where, cap_error *err) {
  size_t i;
  const char *key;
  json_t *e;
  if (json_is_real(v)) return invalid(err, "%.200s holds a fraction: statements carry whole numbers", where);
  if (json_is_integer(v) && (json_integer_value(v) > MAX_SAFE || json_integer_value(v) < -MAX_SAFE))
    return invalid(err, "%.200s holds a number past 2^53: such numbers are decimal strings", where);
  if (json_is_array(v)) json_array_foreach(v, i, e) if (check_numbers(e, where, err)) return err->code;
  if (json_is_object(v))
    json_object_foreach((json_t *)v, key, e) if (check_numbers(e, key, err)) return err->code;
  return CAP_OK;
}

/* A summary's fields agree: its verifier is this host, its result is
 * PASSED or FAILED, its levels and failure record say the same, and its
 * input attestation is the one world statement written beside it. */
static cap_code check_summary_rules(const json_t *p, cap_error *err) {
  const char *verifier = json_string_value(json_object_get(json_object_get(p, "verifier"), "id"));
  if (strcmp(verifier, VSA_VERIFIER_ID) != 0)
    return invalid(err,
                   "verifier.id is \"%.200s\", not " VSA_VERIFIER_ID
                   ": a summary this host "
                   "did not write",
                   verifier);
  const char *result = json_string_value(json_object_get(p, "verificationResult"));
  bool passed = strcmp(result, "PASSED") == 0;
  if (!passed && strcmp(result, "FAILED") != 0)
    return invalid(err, "predicate.verificationResult is \"%.100s\": it must be PASSED or FAILED", result);
  const json_t *levels = json_object_get(p, "verifiedLevels");
  const char *level = json_string_value(json_array_get(levels, 0));
  const char *want = passed ? "DSH_CAPSULE_ADMITTED_V1" : "FAILED";
  if (json_array_size(levels) != 1 || strcmp(level, want) != 0)
    return invalid(err, "predicate.verifiedLevels must be [\"%s\"] beside verificationResult %s", want,
                   result);
  if (passed == (json_object_get(p, "failure") != NULL))
    return invalid(
        err, "predicate.failure %s",
        passed ? "stands beside verificationResult PASSED" : "is missing: a FAILED summary records its code");
  const json_t *inputs = json_object_get(p, "inputAttestations");
  if (inputs) {
    char path[4200];
    const char *uri = json_string_value(json_object_get(json_array_get(inputs, 0), "uri"));
    const char *base = uri && file_uri_path(uri, path, sizeof path) ? strrchr(path, '/') : NULL;
    if (json_array_size(inputs) != 1 || !base || strcmp(base, "/world.intoto.json") != 0)
      return invalid(err,
                     "predicate.inputAttestations must name one file, the world statement "
                     "(DIR/world.intoto.json) written beside the summary");
  }
  return CAP_OK;
}

cap_code statement_values_check_subjects(const json_t *subjects, cap_error *err) {
  if (!json_is_array(subjects) || json_array_size(subjects) == 0)
    return invalid(err, "%s", "a statement names at least one subject");
  if (check(statement_schema_subject, subjects, "subject", "subject", err)) return err->code;
  size_t i, j;
  json_t *a, *b;
  json_array_foreach(subjects, i, a) json_array_foreach(subjects, j, b) {
    const char *na = json_string_value(json_object_get(a, "name")),
               *nb = json_string_value(json_object_get(b, "name"));
    if (j > i && strcmp(na, nb) == 0)
      return invalid(err, "subject %.200s is named twice: one name, one digest", na);
  }
  return CAP_OK;
}

cap_code statement_values_check_predicate(const char *predicate_type, const json_t *predicate,
                                          cap_error *err) {
  bool world = strcmp(predicate_type, WORLD_PREDICATE_TYPE) == 0;
  bool summary = strcmp(predicate_type, VSA_PREDICATE_TYPE) == 0;
  const schema_row *rows = world     ? statement_schema_world
                           : summary ? statement_schema_summary
                                     : statement_schema_release;
  if (!json_is_object(predicate)) return invalid(err, "%s", "predicate must be a JSON object");
  if (check_numbers(predicate, "predicate", err) || check_object(rows, predicate, "", "predicate", err))
    return err->code;
  return summary ? check_summary_rules(predicate, err) : CAP_OK;
}
