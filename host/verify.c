/* capsule-host verify: a signed statement checked as a reviewer would,
 * and (with a config) against the capsules and the world of this machine:
 * a command over a whole host, like activation. */
#include "verify.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admit/capsule.h"
#include "attest/attest.h"
#include "digest.h"
#include "host.h"
#include "safe_open.h"
#include "statement/dsse.h"
#include "statement/signing_key.h"
#include "statement/statement.h"
#include "statement/world_predicate.h"

static cap_code read_envelope_file(const char *path, char **text, size_t *len, cap_error *err) {
  struct stat st;
  int fd = so_open_regular(AT_FDCWD, path, &st);
  if (fd < 0)
    return cap_fail(err, CAP_E_ENVELOPE_INVALID, "%s: %s", path,
                    fd == SO_NOT_REGULAR ? "not a regular file" : so_open_errno_text(errno));
  so_read_result r = so_read_bounded(fd, DSSE_MAX_BYTES, text, len);
  close(fd);
  if (r == SO_READ_TOO_LARGE)
    return cap_fail(err, CAP_E_ENVELOPE_INVALID, "%s is larger than the %u bytes an envelope may have", path,
                    DSSE_MAX_BYTES);
  return r == SO_READ_OK ? CAP_OK : cap_fail(err, CAP_E_ENVELOPE_INVALID, "%s cannot be read", path);
}

/* A verification summary verifies only when it records a pass: a FAILED
 * one is a genuine, signed record that the capsule was refused, and a
 * reviewer or CI step reading verify's exit status must see a failure. */
static cap_code summary_passed(const json_t *statement, cap_error *err) {
  const json_t *p = json_object_get(statement, "predicate");
  const char *result = json_string_value(json_object_get(p, "verificationResult"));
  if (strcmp(json_string_value(json_object_get(statement, "predicateType")), VSA_PREDICATE_TYPE) != 0 ||
      strcmp(result, "PASSED") == 0)
    return CAP_OK;
  const json_t *failure = json_object_get(p, "failure");
  const char *code = json_string_value(json_object_get(failure, "code"));
  const char *why = json_string_value(json_object_get(failure, "message"));
  return cap_fail(
      err, CAP_E_VERIFICATION_FAILED,
      "the summary is validly signed and records a FAILED "
      "verification of %.200s: %.60s: %.200s",
      json_string_value(json_object_get(json_array_get(json_object_get(statement, "subject"), 0), "name")),
      code ? code : "no code", why ? why : "no reason");
}

/* The subjects the config admits here for this statement: the world's
 * (every capsule), or the one capsule a verification summary names. */
static json_t *expected_subjects(const host *h, const json_t *statement, cap_error *err) {
  const char *type = json_string_value(json_object_get(statement, "predicateType"));
  json_t *want = NULL;
  if (strcmp(type, WORLD_PREDICATE_TYPE) == 0) {
    if (world_predicate_subjects(h, &want, err)) return NULL;
    return want;
  }
  const char *first =
      json_string_value(json_object_get(json_array_get(json_object_get(statement, "subject"), 0), "name"));
  const char *slash = first ? strchr(first, '/') : NULL;
  want = json_array();
  for (size_t i = 0; slash && i < h->cap_count; i++)
    if (strlen(h->caps[i].m.id) == (size_t)(slash - first) &&
        strncmp(h->caps[i].m.id, first, (size_t)(slash - first)) == 0)
      world_predicate_capsule_subjects(&h->caps[i], want);
  if (json_array_size(want) == 0) {
    json_decref(want);
    cap_fail(err, CAP_E_SUBJECT_MISMATCH, "the summary names %.200s, a capsule the config does not admit",
             first ? first : "nothing");
    return NULL;
  }
  return want;
}

/* A summary holds for the config it was verified under: verify --config F
 * on a summary requires F to be that config, byte for byte. */
static cap_code check_policy(const host *h, const json_t *statement, cap_error *err) {
  const json_t *policy = json_object_get(json_object_get(statement, "predicate"), "policy");
  const char *got = json_string_value(json_object_get(json_object_get(policy, "digest"), "sha256"));
  /* The canonical digest; a summary written before names the file's bytes. */
  if (got && (strcmp(got, h->cfg.sha256) == 0 || strcmp(got, h->cfg.bytes_sha256) == 0)) return CAP_OK;
  return cap_fail(err, CAP_E_POLICY_DRIFT,
                  "the summary was verified under the config with sha256 %.64s "
                  "(%.200s), not under %s (sha256 %s)",
                  got ? got : "(none)",
                  json_string_value(json_object_get(policy, "uri"))
                      ? json_string_value(json_object_get(policy, "uri"))
                      : "no uri",
                  h->cfg.path, h->cfg.sha256);
}

/* Re-attests this machine and compares the world with the statement's. */
static cap_code check_world(host *h, const json_t *statement, json_t *report, cap_error *err) {
  json_t *now = NULL, *drift = json_array();
  cap_code rc = attest_run(h, err);
  if (!rc) rc = world_predicate(h, &now, err);
  if (!rc) statement_world_drift(json_object_get(statement, "predicate"), now, drift);
  json_decref(now);
  json_object_set(report, "drift", drift);
  if (!rc && json_array_size(drift)) {
    char *fields = json_dumps(drift, JSON_COMPACT);
    rc = cap_fail(err, CAP_E_WORLD_DRIFT, "this machine's world differs from the attested one in %s",
                  fields ? fields : "several fields");
    free(fields);
  }
  json_decref(drift);
  return rc;
}

/* --subject FILE: FILE, as it is now, is one of the statement's subjects. */
static cap_code check_subject_file(const json_t *statement, const char *file, cap_error *err) {
  char hex[SHA256_HEX_LEN + 1];
  if (!digest_sha256_path_hex(file, 1ull << 34, hex))
    return cap_fail(err, CAP_E_USAGE, "--subject %s cannot be read as a regular file", file);
  const char *slash = strrchr(file, '/');
  return statement_names_subject(statement, slash ? slash + 1 : file, hex, err);
}

cap_code verify_attestation(const char *path, const char *public_key, const char *config,
                            const char *subject_file, json_t **report, cap_error *err) {
  *report = NULL;
  char *text = NULL;
  size_t len = 0;
  dsse_parsed p = {0};
  signing_key key = {0};
  json_t *statement = NULL;
  cap_code rc = read_envelope_file(path, &text, &len, err);
  if (!rc) rc = dsse_parse(text, len, &p, err);
  if (!rc) rc = signing_key_load_public(public_key, &key, err);
  if (!rc) rc = dsse_verify(&p, &key, err);
  if (!rc) rc = statement_read(p.payload, p.payload_len, &statement, err);
  if (!rc) rc = summary_passed(statement, err);
  if (!rc && subject_file) rc = check_subject_file(statement, subject_file, err);
  bool release = !rc && strcmp(json_string_value(json_object_get(statement, "predicateType")),
                               RELEASE_PREDICATE_TYPE) == 0;
  if (release && config)
    rc = cap_fail(err, CAP_E_USAGE,
                  "a release statement names a tarball, not capsules: check it with "
                  "--subject TARBALL, without --config");
  free(text);
  dsse_parsed_free(&p);
  json_t *out = rc ? NULL
                   : json_pack("{s:s,s:O,s:s}", "predicateType",
                               json_string_value(json_object_get(statement, "predicateType")), "subject",
                               json_object_get(statement, "subject"), "keyid", key.keyid);
  signing_key_free(&key);
  if (!rc && config) {
    host h;
    memset(&h, 0, sizeof h);
    json_t *want = NULL;
    rc = host_open(&h, config, err);
    if (!rc) rc = host_admit_capsules(&h, err);
    if (!rc && !(want = expected_subjects(&h, statement, err))) rc = err->code;
    if (!rc) rc = statement_subjects_match(statement, want, err);
    json_decref(want);
    bool world =
        strcmp(json_string_value(json_object_get(statement, "predicateType")), WORLD_PREDICATE_TYPE) == 0;
    if (!rc) rc = world ? check_world(&h, statement, out, err) : check_policy(&h, statement, err);
    host_close(&h);
  }
  json_decref(statement);
  if (rc) {
    json_decref(out);
    return rc;
  }
  *report = out;
  return CAP_OK;
}
