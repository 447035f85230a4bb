#include "capsule.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle.h"
#include "digest.h"
#include "safe_open.h"
#include "strict_json.h"

static const char *file_type(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a UNIX socket";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISLNK(m)) return "a symlink";
  return "not a regular file";
}

static const char *open_errno_text(int e) {
  switch (e) {
  case ELOOP: return "traverses a symbolic link";
  case EXDEV: return "escapes its root";
  case ENOENT: return "does not exist";
  case ENOTDIR: return "has a non-directory parent";
  default: return strerror(e);
  }
}

/* so_open_regular with an error naming what and why. */
static int open_regular(int dirfd, const char *path, struct stat *st, cap_code code,
                        const char *what, cap_error *err) {
  int fd = so_open_regular(dirfd, path, st);
  if (fd == SO_NOT_REGULAR) cap_fail(err, code, "%s %s is %s", what, path, file_type(st->st_mode));
  else if (fd < 0) cap_fail(err, code, "%s %s %s", what, path, open_errno_text(errno));
  return fd;
}

static cap_code check_policy(const capsule_config *cfg, const manifest *m, cap_error *err) {
  if (strcmp(cfg->capsule_id, m->id) != 0)
    return cap_fail(err, CAP_E_POLICY_ID_MISMATCH,
                    "manifest id \"%s\" does not match policy.capsuleId \"%s\"", m->id,
                    cfg->capsule_id);
  size_t i;
  json_t *v;
  json_array_foreach(m->tools, i, v) if (!sj_array_has_string(cfg->tools, json_string_value(v)))
      return cap_fail(err, CAP_E_POLICY_TOOL_NOT_ALLOWED,
                      "tool \"%s\" is not in policy.tools", json_string_value(v));
  json_array_foreach(m->prompt_sections, i, v) if (!sj_array_has_string(cfg->prompt_sections,
                                                              json_string_value(v)))
      return cap_fail(err, CAP_E_POLICY_PROMPT_NOT_ALLOWED,
                      "prompt section \"%s\" is not in policy.promptSections",
                      json_string_value(v));
  json_array_foreach(m->requests, i, v) {
    const char *path = json_string_value(json_object_get(v, "path"));
    bool granted = false;
    size_t j;
    json_t *g;
    json_array_foreach(cfg->grants, j, g) if (json_equal(g, v)) granted = true;
    if (!granted)
      return cap_fail(err, CAP_E_POLICY_REQUEST_NOT_GRANTED,
                      "request workspace-read \"%s\" has no identical policy grant", path);
  }
  return CAP_OK;
}

static bool path_within(const char *inner, const char *outer) {
  size_t n = strlen(outer);
  if (strcmp(outer, "/") == 0) return true;
  return strncmp(inner, outer, n) == 0 && (inner[n] == '\0' || inner[n] == '/');
}

static cap_code resolve_workspace(const capsule_config *cfg, const manifest *m,
                                  const staging *stg, loaded_capsule *out, cap_error *err) {
  if (json_array_size(m->requests) == 0) return CAP_OK;
  if (!cfg->workspace_root)
    return cap_fail(err, CAP_E_WORKSPACE_ROOT_INVALID,
                    "capsule requests workspace files but has no workspaceRoot");
  if (path_within(stg->dir, cfg->workspace_root) || path_within(cfg->workspace_root, stg->dir))
    return cap_fail(err, CAP_E_WORKSPACE_STAGING_OVERLAP,
                    "workspaceRoot %s overlaps private staging %s (set TMPDIR outside it)",
                    cfg->workspace_root, stg->dir);
  int root = so_open(AT_FDCWD, cfg->workspace_root, O_PATH | O_DIRECTORY);
  if (root < 0)
    return cap_fail(err, CAP_E_WORKSPACE_ROOT_INVALID, "workspaceRoot %s %s",
                    cfg->workspace_root,
                    errno == ENOTDIR ? "is not a directory" : open_errno_text(errno));
  size_t i;
  json_t *r;
  cap_code rc = CAP_OK;
  json_array_foreach(m->requests, i, r) {
    if (out->file_count == CAPSULE_MAX_GRANTS) {
      rc = cap_fail(err, CAP_E_MANIFEST_INVALID, "too many workspace requests");
      break;
    }
    const char *path = json_string_value(json_object_get(r, "path"));
    int fd = so_open(root, path, O_PATH);
    struct stat st;
    if (fd < 0) {
      rc = cap_fail(err, CAP_E_WORKSPACE_TARGET_INVALID, "workspace file %s %s", path,
                    open_errno_text(errno));
      break;
    }
    if (fstat(fd, &st) != 0) {
      rc = cap_fail(err, CAP_E_WORKSPACE_TARGET_INVALID, "workspace file %s cannot be inspected: %s",
                    path, strerror(errno));
      close(fd);
      break;
    }
    if (!S_ISREG(st.st_mode)) {
      rc = cap_fail(err, CAP_E_WORKSPACE_TARGET_INVALID, "workspace file %s is %s", path,
                    file_type(st.st_mode));
      close(fd);
      break;
    }
    /* Another name for the inode could be anywhere: refuse aliases. */
    if (st.st_nlink != 1) {
      rc = cap_fail(err, CAP_E_WORKSPACE_HARDLINK,
                    "workspace file %s has %lu hard links; exactly one is required", path,
                    (unsigned long)st.st_nlink);
      close(fd);
      break;
    }
    if ((unsigned long long)st.st_dev == out->guest.dev &&
        (unsigned long long)st.st_ino == out->guest.ino) {
      rc = cap_fail(err, CAP_E_WORKSPACE_STAGING_OVERLAP, "workspace file %s is a staged file", path);
      close(fd);
      break;
    }
    workspace_file *wf = &out->files[out->file_count++];
    wf->path = path;
    wf->dev = (unsigned long long)st.st_dev;
    wf->ino = (unsigned long long)st.st_ino;
    wf->pin_fd = fd;
  }
  close(root);
  return rc;
}

/* The bytes in hand must have the digest the manifest pins (hex gets the
 * actual one); the same bytes are then staged, never read again. */
cap_code capsule_check_digest(const manifest *m, const char *artifact, size_t alen, char *hex,
                              cap_error *err) {
  if (!digest_sha256_hex(artifact, alen, hex)) return cap_fail(err, CAP_E_INTERNAL, "sha256 failed");
  if (strcmp(hex, m->sha256) != 0)
    return cap_fail(err, CAP_E_INTEGRITY_MISMATCH, "artifact %s has sha256 %s, manifest pins %s",
                    m->entry, hex, m->sha256);
  return CAP_OK;
}

/* Stages verified artifact bytes and resolves the workspace grants. */
static cap_code stage_artifact(const capsule_config *cfg, staging *stg, size_t index,
                               const char *artifact, size_t alen, loaded_capsule *out,
                               cap_error *err) {
  char name[32];
  snprintf(name, sizeof name, "guest-%zu.mjs", index);
  if (staging_add(stg, name, artifact, alen, &out->guest, err)) return err->code;
  return resolve_workspace(cfg, &out->m, stg, out, err);
}

static cap_code parse_manifest(const capsule_config *cfg, const host_limits *lim, const char *text,
                               size_t len, bool police, loaded_capsule *out, cap_error *err) {
  sj_limits jl = {(size_t)lim->max_json_depth, (size_t)lim->max_json_nodes};
  if (manifest_parse(text, len, &jl, lim->max_contributions, &out->m, err)) return err->code;
  return police ? check_policy(cfg, &out->m, err) : CAP_OK;
}

cap_code capsule_admit_bundle(const char *path, const capsule_config *policy,
                              const host_limits *lim, manifest *m, bundle_contents *b,
                              char *hex, cap_error *err) {
  cap_code rc = bundle_read_path(path, lim, b, err);
  sj_limits jl = {(size_t)lim->max_json_depth, (size_t)lim->max_json_nodes};
  if (!rc) rc = manifest_parse(b->manifest, b->manifest_len, &jl, lim->max_contributions, m, err);
  if (!rc && policy) rc = check_policy(policy, m, err);
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
  if (!rc) rc = stage_artifact(cfg, stg, index, b.other, b.other_len, out, err);
  bundle_contents_free(&b);
  return rc;
}

cap_code capsule_read_root(const capsule_config *cfg, const host_limits *lim, bool police,
                           loaded_capsule *out, char **manifest_text, size_t *mlen,
                           char **artifact, size_t *alen, cap_error *err) {
  int root = so_open(AT_FDCWD, cfg->root, O_PATH | O_DIRECTORY);
  if (root < 0)
    return cap_fail(err, CAP_E_CAPSULE_ROOT_INVALID, "capsule root %s %s", cfg->root,
                    errno == ENOTDIR ? "is not a directory" : open_errno_text(errno));
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

cap_code capsule_load(const capsule_config *cfg, const host_limits *lim, staging *stg,
                      size_t index, loaded_capsule *out, cap_error *err) {
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

void capsule_free(loaded_capsule *c) {
  for (size_t i = 0; i < c->file_count; i++)
    if (c->files[i].pin_fd >= 0) close(c->files[i].pin_fd);
  c->file_count = 0;
  manifest_free(&c->m);
  json_decref(c->descriptor);
  c->descriptor = NULL;
}

cap_code capsule_workspace_unchanged(const loaded_capsule *cap, cap_error *err) {
  if (cap->file_count == 0) return CAP_OK;
  int root = so_open(AT_FDCWD, cap->cfg->workspace_root, O_PATH | O_DIRECTORY);
  if (root < 0)
    return cap_fail(err, CAP_E_LAUNCH_SOURCE_MISMATCH, "workspace root %s: %s",
                    cap->cfg->workspace_root, strerror(errno));
  cap_code rc = CAP_OK;
  for (size_t i = 0; !rc && i < cap->file_count; i++) {
    const workspace_file *f = &cap->files[i];
    struct stat st;
    int fd = so_open_regular(root, f->path, &st);
    if (fd >= 0) close(fd);
    if (fd < 0 || (unsigned long long)st.st_dev != f->dev || (unsigned long long)st.st_ino != f->ino)
      rc = cap_fail(err, CAP_E_LAUNCH_SOURCE_MISMATCH,
                    "workspace file %s is not the file the warm cell's launcher verified "
                    "(replaced, removed or not regular)", f->path);
  }
  close(root);
  return rc;
}
