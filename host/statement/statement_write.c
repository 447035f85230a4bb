#include "statement_write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "admit/capsule.h"
#include "admit/config.h"
#include "admit/names.h"
#include "digest.h"
#include "dsse.h"
#include "file_uri.h"
#include "host_state.h"
#include "safe_open.h"
#include "signing_key.h"
#include "statement.h"
#include "statement_schema.h"
#include "version.h"
#include "world_predicate.h"

/* Writes name in dirfd whole or not at all: a new file of its own, renamed
 * over the old one, so that a reader (or serve restating the world) never
 * meets half a statement, and a link at name is replaced, never followed. */
static cap_code write_file(int dirfd, const char *name, const char *text, size_t len, cap_error *err) {
  char tmp[300];
  snprintf(tmp, sizeof tmp, ".%s.%ld.tmp", name, (long)getpid());
  int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  bool ok = fd >= 0 && so_write_all(fd, text, len) && fsync(fd) == 0;
  int saved = errno;
  if (fd >= 0) close(fd);
  if (ok && renameat(dirfd, tmp, dirfd, name) != 0) ok = false, saved = errno;
  if (!ok && fd >= 0) unlinkat(dirfd, tmp, 0);
  return ok ? CAP_OK
            : cap_fail(err, CAP_E_STATEMENT_DIR_INVALID,
                       "cannot write %s in the statement "
                       "directory: %s",
                       name, strerror(saved));
}

static cap_code write_json(int dirfd, const char *name, const json_t *v, cap_error *err) {
  char *text = json_dumps(v, JSON_INDENT(2) | JSON_SORT_KEYS);
  cap_code rc = text ? write_file(dirfd, name, text, strlen(text), err)
                     : cap_fail(err, CAP_E_INTERNAL, "cannot encode %s", name);
  free(text);
  return rc;
}

/* One statement: its payload as stem.intoto.json, and signed, its
 * envelope and bundle. hex gets the payload's digest. */
cap_code statement_write_one(int dirfd, const char *stem, json_t *statement, const signing_key *key,
                             json_t *files, char hex[65], cap_error *err) {
  char *payload = json_dumps(statement, JSON_COMPACT | JSON_SORT_KEYS);
  json_decref(statement);
  if (!payload) return cap_fail(err, CAP_E_INTERNAL, "cannot encode the %s statement", stem);
  size_t len = strlen(payload);
  char name[300];
  digest_sha256_hex(payload, len, hex);
  snprintf(name, sizeof name, "%s.intoto.json", stem);
  cap_code rc = write_file(dirfd, name, payload, len, err);
  if (!rc) json_array_append_new(files, json_string(name));
  json_t *envelope = NULL;
  if (!rc && key) rc = dsse_sign((const unsigned char *)payload, len, key, &envelope, err);
  if (!rc && key) {
    snprintf(name, sizeof name, "%s.dsse.json", stem);
    rc = write_json(dirfd, name, envelope, err);
    if (!rc) json_array_append_new(files, json_string(name));
    json_t *bundle = rc ? NULL : dsse_sigstore_bundle(envelope, key->keyid);
    snprintf(name, sizeof name, "%s.sigstore.json", stem);
    if (!rc)
      rc = bundle ? write_json(dirfd, name, bundle, err) : cap_fail(err, CAP_E_INTERNAL, "out of memory");
    if (!rc) json_array_append_new(files, json_string(name));
    json_decref(bundle);
  }
  json_decref(envelope);
  free(payload);
  return rc;
}

static void now_rfc3339(char out[32]) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* What a summary's writer reads. */
typedef struct {
  const host *h;
  const char *self, *world_hex, *when;
  const char *resource, *policy_uri, *world_uri;
  cap_code outcome;
  const cap_error *why;
} summary_sources;

/* SlsaResult's vocabulary: verifiedLevels names the result, "FAILED" when
 * the capsule was refused; inputAttestations is absent when no world was
 * attested; every uri is an absolute, percent-encoded file:// URI. */
static bool summary_value(const schema_row *row, void *ctx, json_t **out) {
  const summary_sources *s = ctx;
  switch (row->from) {
    case SRC_VERIFIER_ID: return statement_schema_give(out, json_string(VSA_VERIFIER_ID));
    case SRC_HOST_VERSION: return statement_schema_give(out, json_string(CAPSULE_VERSION));
    case SRC_HOST_SHA256: return statement_schema_give(out, json_string(s->self));
    case SRC_TIME_NOW: return statement_schema_give(out, json_string(s->when));
    case SRC_RESOURCE_URI: return statement_schema_give(out, json_string(s->resource));
    case SRC_POLICY_URI: return statement_schema_give(out, json_string(s->policy_uri));
    case SRC_POLICY_SHA256: return statement_schema_give(out, json_string(s->h->cfg.sha256));
    case SRC_INPUT_ATTESTATIONS:
      return statement_schema_give(out, s->world_hex[0] ? json_pack("[{s:s,s:{s:s}}]", "uri", s->world_uri,
                                                                    "digest", "sha256", s->world_hex)
                                                        : NULL);
    case SRC_RESULT: return statement_schema_give(out, json_string(s->outcome ? "FAILED" : "PASSED"));
    case SRC_LEVELS:
      return statement_schema_give(out, json_pack("[s]", s->outcome ? "FAILED" : "DSH_CAPSULE_ADMITTED_V1"));
    case SRC_FAILURE_CODE:
      return statement_schema_give(out, s->outcome ? json_string(cap_code_name(s->outcome)) : NULL);
    case SRC_FAILURE_MESSAGE:
      return statement_schema_give(out, s->outcome ? json_string(s->why ? s->why->message : "") : NULL);
    default: return false; /* not a source of this writer */
  }
}

/* The SLSA VSA v1 predicate, from statement_schema_summary's rows. */
static cap_code vsa_predicate(const host *h, const loaded_capsule *cap, const char *self, const char *dir,
                              const char *world_hex, cap_code outcome, const cap_error *why, json_t **out,
                              cap_error *err) {
  char when[32], resource[8192], policy_uri[8192], world_path[4200], world_uri[8192];
  now_rfc3339(when);
  int n = snprintf(world_path, sizeof world_path, "%s/world.intoto.json", dir);
  if (!file_uri(cap->cfg->bundle ? cap->cfg->bundle : cap->cfg->root, resource, sizeof resource) ||
      !file_uri(h->cfg.path, policy_uri, sizeof policy_uri) || n < 0 || (size_t)n >= sizeof world_path ||
      !file_uri(world_path, world_uri, sizeof world_uri))
    return cap_fail(err, CAP_E_INTERNAL, "the verification summary cannot be built: a path is too long");
  summary_sources s = {h, self, world_hex, when, resource, policy_uri, world_uri, outcome, why};
  return statement_schema_build(statement_schema_summary, summary_value, &s, "verification summary", out,
                                err);
}

/* The statement directory, created if missing, never through a link: its
 * parent is opened first without following links, and only then is the
 * last component made inside that descriptor, so that a refused path has
 * created nothing anywhere. */
int statement_write_open_dir(const char *dir, cap_error *err) {
  char parent[4200];
  size_t len = strlen(dir);
  while (len > 1 && dir[len - 1] == '/') len--; /* "out/" is "out" */
  if (len >= sizeof parent) {
    cap_fail(err, CAP_E_STATEMENT_DIR_INVALID, "--statement %s is too long", dir);
    return -1;
  }
  memcpy(parent, dir, len);
  parent[len] = '\0';
  char *slash = strrchr(parent, '/');
  const char *base = slash ? slash + 1 : parent, *above = slash == parent ? "/" : slash ? parent : ".";
  if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
    cap_fail(err, CAP_E_STATEMENT_DIR_INVALID, "--statement %s: name a directory of its own", dir);
    return -1;
  }
  if (slash && slash != parent) *slash = '\0'; /* parent now names the folder above base */
  int parent_fd = so_open(AT_FDCWD, above, O_PATH | O_DIRECTORY);
  if (parent_fd < 0) {
    cap_fail(err, CAP_E_STATEMENT_DIR_INVALID,
             "--statement %s: its parent %s: name a directory of "
             "its own",
             dir, errno == ENOTDIR ? "is not a directory" : so_open_errno_text(errno));
    return -1;
  }
  if (mkdirat(parent_fd, base, 0755) != 0 && errno != EEXIST) {
    cap_fail(err, CAP_E_STATEMENT_DIR_INVALID, "--statement %s cannot be created: %s", dir, strerror(errno));
    close(parent_fd);
    return -1;
  }
  int dirfd = so_open(parent_fd, base, O_PATH | O_DIRECTORY);
  if (dirfd < 0)
    cap_fail(err, CAP_E_STATEMENT_DIR_INVALID, "--statement %s %s: name a directory of its own", dir,
             errno == ENOTDIR ? "is not a directory" : so_open_errno_text(errno));
  close(parent_fd);
  return dirfd;
}

cap_code statement_write_preflight(const host *h, cap_error *err) {
  signing_key key;
  bool have_key = false;
  if (signing_key_load_private(h->statement_key, &key, &have_key, err)) return err->code;
  if (have_key) signing_key_free(&key);
  int dirfd = statement_write_open_dir(h->statement_dir, err);
  if (dirfd < 0) return err->code;
  close(dirfd);
  return CAP_OK;
}

/* A summary's name comes from validated data only, never from bytes that
 * were refused: the manifest id once it is a valid id, else the policy's
 * capsuleId if it is one, else the capsule's place in the config. */
static void summary_id(const loaded_capsule *cap, size_t index, char *out, size_t size) {
  if (cap->m.id && names_is_id(cap->m.id))
    snprintf(out, size, "%s", cap->m.id);
  else if (cap->cfg && cap->cfg->capsule_id && names_is_id(cap->cfg->capsule_id))
    snprintf(out, size, "%s", cap->cfg->capsule_id);
  else
    snprintf(out, size, "capsules-%zu", index);
}

cap_code statement_write_to(host *h, const char *dir, const signing_key *key, cap_code outcome,
                            const cap_error *why, json_t **report, cap_error *err) {
  *report = NULL;
  int dirfd = statement_write_open_dir(dir, err);
  if (dirfd < 0) return err->code;
  json_t *files = json_array();
  char self[65], world_hex[65] = "";
  cap_code rc = world_predicate_host_digest(self, err);
  /* The world statement, when the world was attested. */
  if (!rc && h->attestation) {
    json_t *predicate = NULL, *subjects = NULL;
    rc = world_predicate(h, &predicate, err);
    if (!rc) rc = world_predicate_subjects(h, &subjects, err);
    if (!rc)
      rc = statement_write_one(dirfd, "world", statement_new(subjects, WORLD_PREDICATE_TYPE, predicate), key,
                               files, world_hex, err);
    else
      json_decref(predicate), json_decref(subjects);
  }
  /* A verification summary per capsule whose manifest could be read. */
  for (size_t i = 0; !rc && i < h->cap_count; i++) {
    const loaded_capsule *cap = &h->caps[i];
    char id[160], stem[200], hex[65];
    summary_id(cap, i, id, sizeof id);
    json_t *subjects = json_array();
    world_predicate_capsule_subjects_as(cap, id, subjects);
    if (json_array_size(subjects) == 0) { /* nothing was read to name */
      json_decref(subjects);
      continue;
    }
    json_t *p = NULL;
    snprintf(stem, sizeof stem, "vsa-%s", id);
    rc = vsa_predicate(h, cap, self, dir, world_hex, outcome, why, &p, err);
    if (!rc)
      rc = statement_write_one(dirfd, stem, statement_new(subjects, VSA_PREDICATE_TYPE, p), key, files, hex,
                               err);
    else
      json_decref(subjects);
  }
  close(dirfd);
  if (rc) {
    json_decref(files);
    return rc;
  }
  *report = json_pack("{s:s,s:o,s:b}", "directory", dir, "files", files, "signed", key != NULL);
  if (key) {
    json_object_set_new(*report, "keyid", json_string(key->keyid));
    json_object_set_new(*report, "algorithm", json_string(signing_key_algorithm_name(key->algorithm)));
  } else {
    json_object_set_new(
        *report, "unsigned",
        json_string("no key was given (--key or " ATTEST_KEY_ENV "): the statements are not signed"));
  }
  return CAP_OK;
}

cap_code statement_write(host *h, cap_code outcome, const cap_error *why, cap_error *err) {
  signing_key key;
  bool have_key = false;
  if (signing_key_load_private(h->statement_key, &key, &have_key, err)) return err->code;
  json_t *report = NULL;
  cap_code rc = statement_write_to(h, h->statement_dir, have_key ? &key : NULL, outcome, why, &report, err);
  if (have_key) signing_key_free(&key);
  if (rc) return rc;
  if (!have_key)
    fprintf(stderr, "capsule-host: statements in %s are NOT signed (no --key, no %s)\n", h->statement_dir,
            ATTEST_KEY_ENV);
  char *text = json_dumps(report, JSON_COMPACT);
  fprintf(stderr, "capsule-host: statements: %s\n", text ? text : "?");
  free(text);
  json_decref(report);
  return CAP_OK;
}
