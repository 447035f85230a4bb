#include "launch_doc.h"

#include <stdlib.h>
#include <string.h>

#include "digest.h"
#include "safe_open.h"
#include "strict_json.h"

const char *launch_label_name(ld_label label) {
  switch (label) {
    case LD_RUNTIME: return "runtime";
    case LD_GUEST: return "guest";
    case LD_WORKSPACE_READ: return "workspace-read";
    case LD_LOADER: return "loader";
    case LD_SNAPSHOT: return "snapshot";
  }
  return "?";
}

static bool get_id(const json_t *o, const char *key, unsigned long long *out, cap_error *err) {
  json_t *v = json_object_get(o, key);
  if (!json_is_integer(v) || json_integer_value(v) < 0) {
    cap_fail(err, CAP_E_LAUNCH_DOC_INVALID, "launch document: %s must be a non-negative integer", key);
    return false;
  }
  *out = (unsigned long long)json_integer_value(v);
  return true;
}

static bool has_prefix(const char *s, const char *prefix) {
  size_t n = strlen(prefix);
  return strncmp(s, prefix, n) == 0 && (s[n] == '\0' || s[n] == '/' || prefix[n - 1] == '/');
}

/* Runtime objects may land anywhere the dynamic loader looks, but never on
 * a path the cell reserves for something else. */
static bool runtime_dest_allowed(const char *dest) {
  static const char *const reserved[] = {"/guest", "/workspace", "/tmp", "/proc", "/dev", NULL};
  for (const char *const *r = reserved; *r; r++)
    if (has_prefix(dest, *r)) return false;
  return so_is_plain_absolute(dest);
}

static cap_code parse_mount(const json_t *m, ld_mount *out, cap_error *err) {
  const char *label;
  if (!json_is_object(m) || !sj_string(m, "label", &label, CAP_E_LAUNCH_DOC_INVALID, "mount", err))
    return cap_fail(err, CAP_E_LAUNCH_DOC_INVALID, "launch document: mount must be an object with a label");
  if (strcmp(label, "runtime") == 0 || strcmp(label, "guest") == 0 || strcmp(label, "loader") == 0 ||
      strcmp(label, "snapshot") == 0) {
    static const char *const rt_keys[] = {"label", "source", "dest", "dev", "ino", NULL};
    static const char *const hashed_keys[] = {"label", "source", "dest", "dev", "ino", "sha256", NULL};
    bool guest = strcmp(label, "guest") == 0;
    out->label = guest                            ? LD_GUEST
                 : strcmp(label, "loader") == 0   ? LD_LOADER
                 : strcmp(label, "snapshot") == 0 ? LD_SNAPSHOT
                                                  : LD_RUNTIME;
    bool hashed = out->label != LD_RUNTIME;
    if (!sj_keys(m, hashed ? hashed_keys : rt_keys, hashed ? hashed_keys : rt_keys, CAP_E_LAUNCH_DOC_INVALID,
                 "launch mount", err) ||
        !sj_string(m, "source", &out->source, CAP_E_LAUNCH_DOC_INVALID, "mount", err) ||
        !sj_string(m, "dest", &out->dest, CAP_E_LAUNCH_DOC_INVALID, "mount", err))
      return err->code;
    if (!so_is_plain_absolute(out->source))
      return cap_fail(err, CAP_E_LAUNCH_DOC_INVALID,
                      "launch document: source \"%s\" is not a plain absolute path", out->source);
    if (hashed) {
      if (!sj_string(m, "sha256", &out->sha256, CAP_E_LAUNCH_DOC_INVALID, "mount", err)) return err->code;
      if (!digest_is_sha256_hex(out->sha256))
        return cap_fail(err, CAP_E_LAUNCH_DOC_INVALID,
                        "launch document: %s sha256 is not 64 lowercase hex digits", label);
    }
    /* The loader and the snapshot have one place each; Node's flags name it. */
    if (out->label == LD_LOADER && strcmp(out->dest, LAUNCH_LOADER_DEST) != 0)
      return cap_fail(err, CAP_E_LAUNCH_DOC_INVALID,
                      "launch document: loader dest must be " LAUNCH_LOADER_DEST);
    if (out->label == LD_SNAPSHOT && strcmp(out->dest, LAUNCH_SNAPSHOT_DEST) != 0)
      return cap_fail(err, CAP_E_LAUNCH_DOC_INVALID,
                      "launch document: snapshot dest must be " LAUNCH_SNAPSHOT_DEST);
    if (guest) {
      const char *name = out->dest + strlen(LAUNCH_GUEST_DIR);
      if (strncmp(out->dest, LAUNCH_GUEST_DIR, strlen(LAUNCH_GUEST_DIR)) != 0 ||
          !so_is_plain_relative(name) || strchr(name, '/'))
        return cap_fail(err, CAP_E_LAUNCH_DOC_INVALID, "launch document: guest dest must be /guest/<name>");
    } else if (out->label == LD_RUNTIME && !runtime_dest_allowed(out->dest)) {
      return cap_fail(err, CAP_E_LAUNCH_DOC_INVALID, "launch document: runtime dest \"%s\" is not allowed",
                      out->dest);
    }
  } else if (strcmp(label, "workspace-read") == 0) {
    static const char *const ws_keys[] = {"label", "root", "path", "dest", "dev", "ino", NULL};
    out->label = LD_WORKSPACE_READ;
    if (!sj_keys(m, ws_keys, ws_keys, CAP_E_LAUNCH_DOC_INVALID, "launch mount", err) ||
        !sj_string(m, "root", &out->root, CAP_E_LAUNCH_DOC_INVALID, "mount", err) ||
        !sj_string(m, "path", &out->path, CAP_E_LAUNCH_DOC_INVALID, "mount", err) ||
        !sj_string(m, "dest", &out->dest, CAP_E_LAUNCH_DOC_INVALID, "mount", err))
      return err->code;
    if (!so_is_plain_absolute(out->root) || !so_is_plain_relative(out->path))
      return cap_fail(err, CAP_E_LAUNCH_DOC_INVALID, "launch document: workspace root or path is not plain");
    /* The destination is derived, never chosen: /workspace/<path>. */
    size_t pre = strlen(LAUNCH_WORKSPACE_DIR);
    if (strncmp(out->dest, LAUNCH_WORKSPACE_DIR, pre) != 0 || strcmp(out->dest + pre, out->path) != 0)
      return cap_fail(err, CAP_E_LAUNCH_DOC_INVALID,
                      "launch document: workspace dest must be /workspace/<path>");
  } else {
    return cap_fail(err, CAP_E_LAUNCH_DOC_INVALID, "launch document: unknown mount label \"%s\"", label);
  }
  if (!get_id(m, "dev", &out->dev, err) || !get_id(m, "ino", &out->ino, err)) return err->code;
  return CAP_OK;
}

/* Every ceiling is required: a document without one would run a cell
 * with the host's own limits. */
static cap_code parse_ceilings(const json_t *c, ld_ceilings *out, cap_error *err) {
  static const char *const keys[] = {"memoryBytes", "cpuSeconds", "fileBytes", "openFiles", NULL};
  if (!sj_keys(c, keys, keys, CAP_E_LAUNCH_DOC_INVALID, "launch document ceilings", err) ||
      !sj_opt_uint(c, "memoryBytes", LAUNCH_MIN_MEMORY_BYTES, 1LL << 46, &out->memory_bytes,
                   CAP_E_LAUNCH_DOC_INVALID, "ceilings", err) ||
      !sj_opt_uint(c, "cpuSeconds", 1, 1LL << 31, &out->cpu_seconds, CAP_E_LAUNCH_DOC_INVALID, "ceilings",
                   err) ||
      !sj_opt_uint(c, "fileBytes", 1, 1LL << 46, &out->file_bytes, CAP_E_LAUNCH_DOC_INVALID, "ceilings",
                   err) ||
      !sj_opt_uint(c, "openFiles", LAUNCH_MIN_OPEN_FILES, 1 << 20, &out->open_files, CAP_E_LAUNCH_DOC_INVALID,
                   "ceilings", err))
    return CAP_E_LAUNCH_DOC_INVALID;
  return CAP_OK;
}

cap_code launch_doc_parse(const char *buf, size_t len, launch_doc *doc, cap_error *err) {
  memset(doc, 0, sizeof *doc);
  sj_limits lim = {.max_depth = 8, .max_nodes = 16 * LAUNCH_DOC_MAX_MOUNTS + 64};
  if (len > LAUNCH_DOC_MAX_BYTES) return cap_fail(err, CAP_E_LAUNCH_DOC_INVALID, "launch document too large");
  json_t *root = sj_parse_as(buf, len, &lim, CAP_E_LAUNCH_DOC_INVALID, "launch document", err);
  if (!root) return err->code;
  doc->json = root;
  static const char *const keys[] = {"protocol",      "bwrap",    "tmpfsBytes", "node",
                                     "seccompSha256", "ceilings", "mounts",     NULL};
  static const char *const bw_keys[] = {"path", "dev", "ino", NULL};
  static const char *const node_keys[] = {"permissionFlag", "maxOldSpaceSizeMb", "disableSigusr1", NULL};
  const char *protocol;
  json_t *bwrap, *node, *mounts;
  if (!sj_keys(root, keys, keys, CAP_E_LAUNCH_DOC_INVALID, "launch document", err) ||
      !sj_string(root, "protocol", &protocol, CAP_E_LAUNCH_DOC_INVALID, "launch document", err))
    goto fail;
  if (!sj_string(root, "seccompSha256", &doc->seccomp_sha256, CAP_E_LAUNCH_DOC_INVALID, "launch document",
                 err))
    goto fail;
  if (!digest_is_sha256_hex(doc->seccomp_sha256)) {
    cap_fail(err, CAP_E_LAUNCH_DOC_INVALID, "launch document: seccompSha256 is not 64 lowercase hex digits");
    goto fail;
  }
  if (strcmp(protocol, LAUNCH_DOC_PROTOCOL) != 0) {
    cap_fail(err, CAP_E_LAUNCH_DOC_INVALID, "launch document: protocol must be %s", LAUNCH_DOC_PROTOCOL);
    goto fail;
  }
  bwrap = json_object_get(root, "bwrap");
  if (!sj_keys(bwrap, bw_keys, bw_keys, CAP_E_LAUNCH_DOC_INVALID, "launch document bwrap", err) ||
      !sj_string(bwrap, "path", &doc->bwrap_path, CAP_E_LAUNCH_DOC_INVALID, "bwrap", err) ||
      !get_id(bwrap, "dev", &doc->bwrap_dev, err) || !get_id(bwrap, "ino", &doc->bwrap_ino, err))
    goto fail;
  if (!so_is_plain_absolute(doc->bwrap_path)) {
    cap_fail(err, CAP_E_LAUNCH_DOC_INVALID, "launch document: bwrap path is not plain absolute");
    goto fail;
  }
  doc->tmpfs_bytes = -1;
  if (!sj_opt_uint(root, "tmpfsBytes", 4096, 1LL << 40, &doc->tmpfs_bytes, CAP_E_LAUNCH_DOC_INVALID,
                   "launch document", err))
    goto fail;
  node = json_object_get(root, "node");
  doc->max_old_space_mb = -1;
  json_t *sig;
  if (!sj_keys(node, node_keys, node_keys, CAP_E_LAUNCH_DOC_INVALID, "launch document node", err) ||
      !sj_string(node, "permissionFlag", &doc->permission_flag, CAP_E_LAUNCH_DOC_INVALID, "node", err) ||
      !sj_opt_uint(node, "maxOldSpaceSizeMb", 8, 1 << 20, &doc->max_old_space_mb, CAP_E_LAUNCH_DOC_INVALID,
                   "node", err))
    goto fail;
  if (strcmp(doc->permission_flag, "--permission") != 0 &&
      strcmp(doc->permission_flag, "--experimental-permission") != 0) {
    cap_fail(err, CAP_E_LAUNCH_DOC_INVALID,
             "launch document: permissionFlag must be --permission or --experimental-permission");
    goto fail;
  }
  sig = json_object_get(node, "disableSigusr1");
  if (!json_is_boolean(sig)) {
    cap_fail(err, CAP_E_LAUNCH_DOC_INVALID, "launch document: node.disableSigusr1 must be a boolean");
    goto fail;
  }
  doc->disable_sigusr1 = json_is_true(sig);
  if (parse_ceilings(json_object_get(root, "ceilings"), &doc->ceilings, err) != CAP_OK) goto fail;
  if (!sj_array(root, "mounts", &mounts, CAP_E_LAUNCH_DOC_INVALID, "launch document", err)) goto fail;
  if (json_array_size(mounts) > LAUNCH_DOC_MAX_MOUNTS) {
    cap_fail(err, CAP_E_LAUNCH_DOC_INVALID, "launch document: too many mounts");
    goto fail;
  }
  size_t i, guests = 0, nodes = 0, loaders = 0, snapshots = 0;
  json_t *m;
  json_array_foreach(mounts, i, m) {
    ld_mount *lm = &doc->mounts[doc->mount_count];
    if (parse_mount(m, lm, err) != CAP_OK) goto fail;
    for (size_t j = 0; j < doc->mount_count; j++)
      if (strcmp(doc->mounts[j].dest, lm->dest) == 0) {
        cap_fail(err, CAP_E_LAUNCH_DOC_INVALID, "launch document: duplicate dest \"%s\"", lm->dest);
        goto fail;
      }
    if (lm->label == LD_GUEST) guests++;
    if (lm->label == LD_LOADER) loaders++;
    if (lm->label == LD_SNAPSHOT) snapshots++;
    if (lm->label == LD_RUNTIME && strcmp(lm->dest, LAUNCH_NODE_DEST) == 0) nodes++;
    doc->mount_count++;
  }
  if (guests != 1 || nodes != 1 || loaders != 1) {
    cap_fail(err, CAP_E_LAUNCH_DOC_INVALID,
             "launch document needs exactly one guest, one loader and one %s mount", LAUNCH_NODE_DEST);
    goto fail;
  }
  if (snapshots > 1) {
    cap_fail(err, CAP_E_LAUNCH_DOC_INVALID, "launch document: more than one snapshot");
    goto fail;
  }
  return CAP_OK;
fail:
  /* Every check above fails with LAUNCH_DOC_INVALID (so do the sj_* ones). */
  launch_doc_free(doc);
  return err->code;
}

void launch_doc_free(launch_doc *doc) {
  json_decref(doc->json);
  doc->json = NULL;
  doc->mount_count = 0;
}

static json_t *encode_mount(const ld_mount *m) {
  json_t *o = m->label == LD_WORKSPACE_READ
                  ? json_pack("{s:s,s:s,s:s}", "root", m->root, "path", m->path, "dest", m->dest)
                  : json_pack("{s:s,s:s}", "source", m->source, "dest", m->dest);
  if (!o) return NULL;
  json_object_set_new(o, "label", json_string(launch_label_name(m->label)));
  json_object_set_new(o, "dev", json_integer((json_int_t)m->dev));
  json_object_set_new(o, "ino", json_integer((json_int_t)m->ino));
  if (m->sha256) json_object_set_new(o, "sha256", json_string(m->sha256));
  return o;
}

char *launch_doc_encode(const launch_doc *doc, cap_error *err) {
  json_t *mounts = json_array();
  for (size_t i = 0; mounts && i < doc->mount_count; i++) {
    json_t *m = encode_mount(&doc->mounts[i]);
    if (!m || json_array_append_new(mounts, m) != 0) {
      json_decref(mounts);
      mounts = NULL;
    }
  }
  const ld_ceilings *c = &doc->ceilings;
  json_t *root =
      mounts
          ? json_pack("{s:s,s:{s:s,s:I,s:I},s:I,s:{s:s,s:I,s:b},s:s,s:{s:I,s:I,s:I,s:I},s:o}", "protocol",
                      LAUNCH_DOC_PROTOCOL, "bwrap", "path", doc->bwrap_path, "dev",
                      (json_int_t)doc->bwrap_dev, "ino", (json_int_t)doc->bwrap_ino, "tmpfsBytes",
                      (json_int_t)doc->tmpfs_bytes, "node", "permissionFlag", doc->permission_flag,
                      "maxOldSpaceSizeMb", (json_int_t)doc->max_old_space_mb, "disableSigusr1",
                      doc->disable_sigusr1, "seccompSha256", doc->seccomp_sha256, "ceilings", "memoryBytes",
                      (json_int_t)c->memory_bytes, "cpuSeconds", (json_int_t)c->cpu_seconds, "fileBytes",
                      (json_int_t)c->file_bytes, "openFiles", (json_int_t)c->open_files, "mounts", mounts)
          : NULL;
  char *text = root ? json_dumps(root, JSON_COMPACT) : NULL;
  json_decref(root);
  if (!text) {
    cap_fail(err, CAP_E_LAUNCH_DOC_INVALID, "cannot encode the launch document");
    return NULL;
  }
  /* The host never hands the launcher a document the launcher refuses. */
  launch_doc check;
  if (launch_doc_parse(text, strlen(text), &check, err) != CAP_OK) {
    free(text);
    return NULL;
  }
  launch_doc_free(&check);
  return text;
}
