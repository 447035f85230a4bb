#include "capsule.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle.h"
#include "config.h"
#include "digest.h"
#include "policy.h"
#include "safe_open.h"
#include "strict_json.h"

/* so_open_regular with an error naming what and why. */
static int open_regular(int dirfd, const char *path, struct stat *st, cap_code code, const char *what,
                        cap_error *err) {
  int fd = so_open_regular(dirfd, path, st);
  if (fd == SO_NOT_REGULAR)
    cap_fail(err, code, "%s %s is %s", what, path, so_file_type_text(st->st_mode));
  else if (fd < 0)
    cap_fail(err, code, "%s %s %s", what, path, so_open_errno_text(errno));
  return fd;
}

/* The bytes in hand must have the digest the manifest pins (hex gets the
 * actual one); the same bytes are then staged, never read again. */
cap_code capsule_check_digest(const manifest *m, const char *artifact, size_t alen, char *hex,
                              cap_error *err) {
  if (!digest_sha256_hex(artifact, alen, hex)) return cap_fail(err, CAP_E_INTERNAL, "sha256 failed");
  if (strcmp(hex, m->sha256) != 0)
    return cap_fail(err, CAP_E_INTEGRITY_MISMATCH,
                    "artifact %s has sha256 %s, manifest pins %s (if you "
                    "rebuilt it yourself: capsule-host pin DIR writes the new digest)",
                    m->entry, hex, m->sha256);
  return CAP_OK;
}

/* Stages verified artifact bytes and resolves the workspace grants. */
static cap_code stage_artifact(const capsule_config *cfg, staging *stg, size_t index, const char *artifact,
                               size_t alen, loaded_capsule *out, cap_error *err) {
  char name[32];
  snprintf(name, sizeof name, "guest-%zu.mjs", index);
  if (staging_add(stg, name, artifact, alen, &out->guest, err)) return err->code;
  return workspace_resolve(cfg->workspace_root, out->m.requests, stg->dir, out->guest.dev, out->guest.ino,
                           &out->workspace, err);
}

static cap_code parse_manifest(const capsule_config *cfg, const host_limits *lim, const char *text,
                               size_t len, bool police, loaded_capsule *out, cap_error *err) {
  sj_limits jl = {(size_t)lim->max_json_depth, (size_t)lim->max_json_nodes};
  if (manifest_parse(text, len, &jl, lim->max_contributions, &out->m, err)) return err->code;
  return police ? policy_check(cfg, &out->m, err) : CAP_OK;
}

cap_code capsule_admit_bundle(const char *path, const capsule_config *policy, const host_limits *lim,
                              manifest *m, bundle_contents *b, char *hex, cap_error *err) {
  memset(m, 0, sizeof *m); /* both freeable whatever fails first */
  memset(b, 0, sizeof *b);
  cap_code rc = bundle_read_path(path, lim, b, err);
  sj_limits jl = {(size_t)lim->max_json_depth, (size_t)lim->max_json_nodes};
  if (!rc) rc = manifest_parse(b->manifest, b->manifest_len, &jl, lim->max_contributions, m, err);
  if (!rc && policy) rc = policy_check(policy, m, err);
  if (!rc && !b->other)
    rc = cap_fail(err, CAP_E_BUNDLE_MISSING_ENTRY, "bundle lacks the manifest entry %s", m->entry);
  if (!rc && strcmp(b->other_name, m->entry) != 0)
    rc = cap_fail(err, CAP_E_BUNDLE_EXTRA_ENTRY, "bundle holds %s, but the manifest entry is %s",
                  b->other_name, m->entry);
  if (!rc) rc = capsule_check_digest(m, b->other, b->other_len, hex, err);
  return rc;
}

static cap_code load_from_bundle(const capsule_config *cfg, const host_limits *lim, staging *stg,
                                 size_t index, loaded_capsule *out, cap_error *err) {
  bundle_contents b;
  char hex[SHA256_HEX_LEN + 1];
  cap_code rc = capsule_admit_bundle(cfg->bundle, cfg, lim, &out->m, &b, hex, err);
  if (b.manifest) digest_sha256_hex(b.manifest, b.manifest_len, out->manifest_sha256);
  /* An attestation names the bundle by the bytes this admission read. */
  if (!rc) memcpy(out->bundle_sha256, b.sha256, sizeof b.sha256);
  if (!rc) rc = stage_artifact(cfg, stg, index, b.other, b.other_len, out, err);
  bundle_contents_free(&b);
  return rc;
}

cap_code capsule_read_root(const capsule_config *cfg, const host_limits *lim, bool police,
                           loaded_capsule *out, char **manifest_text, size_t *mlen, char **artifact,
                           size_t *alen, cap_error *err) {
  int root = so_open(AT_FDCWD, cfg->root, O_PATH | O_DIRECTORY);
  if (root < 0)
    return cap_fail(err, CAP_E_CAPSULE_ROOT_INVALID, "capsule root %s %s", cfg->root,
                    errno == ENOTDIR ? "is not a directory" : so_open_errno_text(errno));
  struct stat st;
  char *text = NULL;
  size_t len = 0;
  *artifact = NULL;
  int fd = open_regular(root, cfg->manifest, &st, CAP_E_MANIFEST_OPEN, "manifest", err);
  if (fd < 0) goto fail;
  so_read_result rc = so_read_bounded(fd, (size_t)lim->max_manifest_bytes, &text, &len);
  close(fd);
  if (rc != SO_READ_OK) {
    cap_fail(err, rc == SO_READ_TOO_LARGE ? CAP_E_MANIFEST_TOO_LARGE : CAP_E_MANIFEST_OPEN, "manifest %s: %s",
             cfg->manifest, rc == SO_READ_TOO_LARGE ? "larger than maxManifestBytes" : strerror(errno));
    goto fail;
  }
  /* Known before the parse, so that a summary of a refused manifest can
   * name the bytes it refused. */
  digest_sha256_hex(text, len, out->manifest_sha256);
  if (parse_manifest(cfg, lim, text, len, police, out, err)) goto fail;
  fd = open_regular(root, out->m.entry, &st, CAP_E_ENTRY_OPEN, "entry", err);
  if (fd < 0) goto fail;
  /* Read once; the bytes hashed are the bytes staged: no second read. */
  rc = so_read_bounded(fd, (size_t)lim->max_artifact_bytes, artifact, alen);
  close(fd);
  if (rc != SO_READ_OK) {
    *artifact = NULL;
    cap_fail(err, rc == SO_READ_TOO_LARGE ? CAP_E_ARTIFACT_TOO_LARGE : CAP_E_ENTRY_OPEN, "artifact %s: %s",
             out->m.entry, rc == SO_READ_TOO_LARGE ? "larger than maxArtifactBytes" : strerror(errno));
    goto fail;
  }
  if (manifest_text) {
    *manifest_text = text;
    *mlen = len;
  } else {
    free(text);
  }
  close(root);
  return CAP_OK;
fail:
  free(text);
  close(root);
  return err->code;
}

cap_code capsule_load(const capsule_config *cfg, const host_limits *lim, staging *stg, size_t index,
                      loaded_capsule *out, cap_error *err) {
  memset(out, 0, sizeof *out);
  out->cfg = cfg;
  if (cfg->bundle) return load_from_bundle(cfg, lim, stg, index, out, err);
  char *artifact = NULL;
  size_t alen = 0;
  char hex[SHA256_HEX_LEN + 1];
  cap_code rc = capsule_read_root(cfg, lim, true, out, NULL, NULL, &artifact, &alen, err);
  if (!rc) rc = capsule_check_digest(&out->m, artifact, alen, hex, err);
  if (!rc) rc = stage_artifact(cfg, stg, index, artifact, alen, out, err);
  free(artifact);
  return rc;
}

cap_code capsule_dir_read(const char *dir, const host_limits *lim, capsule_dir *out, cap_error *err) {
  memset(out, 0, sizeof *out);
  capsule_config cfg = {.root = dir, .manifest = BUNDLE_MANIFEST_NAME};
  return capsule_read_root(&cfg, lim, false, &out->cap, &out->manifest_text, &out->manifest_len,
                           &out->artifact, &out->artifact_len, err);
}

void capsule_dir_free(capsule_dir *d) {
  free(d->manifest_text);
  free(d->artifact);
  capsule_free(&d->cap);
}

void capsule_free(loaded_capsule *c) {
  workspace_release(&c->workspace);
  manifest_free(&c->m);
  json_decref(c->descriptor);
  c->descriptor = NULL;
}
