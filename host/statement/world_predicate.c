#include "world_predicate.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admit/capsule.h"
#include "digest.h"
#include "host_state.h"
#include "runtime_scan.h"
#include "safe_open.h"
#include "statement.h"
#include "statement_schema.h"
#include "version.h"

/* Files this large are not hashed (no runtime file is). */
#define HASH_MAX_BYTES (1ull << 34)

static cap_code file_digest(const char *path, char hex[65], cap_error *err) {
  return digest_sha256_path_hex(path, HASH_MAX_BYTES, hex)
             ? CAP_OK
             : cap_fail(err, CAP_E_INTERNAL, "cannot hash %s", path);
}

cap_code world_predicate_host_digest(char hex[65], cap_error *err) {
  /* /proc/self/exe is a magic link so_open refuses: open it as the kernel
   * gives it, the running binary's own inode. */
  int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  bool ok = fd >= 0 && digest_sha256_fd_hex(fd, HASH_MAX_BYTES, hex);
  if (fd >= 0) close(fd);
  return ok ? CAP_OK : cap_fail(err, CAP_E_INTERNAL, "cannot hash the capsule-host binary");
}

/* What the world writer reads: the host, its attestation report, and the
 * digests of the files it pins, taken once. */
typedef struct {
  const host *h;
  const json_t *report;
  char self[65], node[65], bwrap[65], launcher[65], probe[65];
  json_t *shared_objects;
} world_sources;

static cap_code hash_sources(const host *h, world_sources *w, cap_error *err) {
  /* capsule-launcher and capsule-probe run in every cell's start: trusted
   * code beside capsule-host, pinned like it. */
  if (world_predicate_host_digest(w->self, err) || file_digest(h->node.executable.path, w->node, err) ||
      file_digest(h->bwrap.path, w->bwrap, err) || file_digest(h->launcher, w->launcher, err) ||
      file_digest(h->probe, w->probe, err))
    return err->code;
  w->shared_objects = json_array();
  for (size_t i = 0; i < h->node.object_count; i++) {
    const shared_object *o = &h->node.objects[i];
    char so[65];
    if (file_digest(o->source.path, so, err)) return err->code;
    json_array_append_new(w->shared_objects,
                          json_pack("{s:s,s:s,s:s}", "dest", o->dest, "path", o->source.path, "sha256", so));
  }
  return CAP_OK;
}

/* The kinds of namespace the cell was measured to hold of its own (the
 * report's "namespaces": each one's id differed from the host's), sorted. */
static json_t *own_namespaces(const json_t *report) {
  const json_t *measured = json_object_get(report, "namespaces");
  const char **kinds = calloc(json_object_size(measured) + 1, sizeof *kinds);
  if (!kinds) return NULL;
  size_t n = 0;
  const char *kind;
  json_t *id;
  json_object_foreach((json_t *)measured, kind, id) {
    size_t at = n++;
    for (; at > 0 && strcmp(kinds[at - 1], kind) > 0; at--) kinds[at] = kinds[at - 1];
    kinds[at] = kind;
  }
  json_t *list = json_array();
  for (size_t i = 0; i < n; i++) json_array_append_new(list, json_string(kinds[i]));
  free(kinds);
  return list;
}

/* Statement files name no host path by accident: the paths below are the
 * ones the host resolved, which a reviewer must see to know which Node ran. */
static bool world_value(const schema_row *row, void *ctx, json_t **out) {
  const world_sources *w = ctx;
  switch (row->from) {
    case SRC_REPORT:
      return statement_schema_give(out, json_incref(statement_schema_at(w->report, row->report)));
    case SRC_HOST_VERSION: return statement_schema_give(out, json_string(CAPSULE_VERSION));
    case SRC_HOST_SHA256: return statement_schema_give(out, json_string(w->self));
    case SRC_LAUNCHER_SHA256: return statement_schema_give(out, json_string(w->launcher));
    case SRC_PROBE_SHA256: return statement_schema_give(out, json_string(w->probe));
    case SRC_NODE_VERSION: return statement_schema_give(out, json_string(w->h->node_version));
    case SRC_NODE_PATH: return statement_schema_give(out, json_string(w->h->node.executable.path));
    case SRC_NODE_SHA256: return statement_schema_give(out, json_string(w->node));
    case SRC_NODE_SHARED_OBJECTS: return statement_schema_give(out, json_incref(w->shared_objects));
    case SRC_BWRAP_PATH: return statement_schema_give(out, json_string(w->h->bwrap.path));
    case SRC_BWRAP_SHA256: return statement_schema_give(out, json_string(w->bwrap));
    case SRC_CELL_OWN_NAMESPACES: return statement_schema_give(out, own_namespaces(w->report));
    case SRC_NODE_IDENTITY: return statement_schema_give(out, runtime_identity_json(&w->h->node.executable));
    case SRC_BWRAP_IDENTITY: return statement_schema_give(out, runtime_identity_json(&w->h->bwrap));
    default: return false; /* not a source of this writer */
  }
}

cap_code world_predicate(const host *h, json_t **predicate, cap_error *err) {
  *predicate = NULL;
  if (!h->attestation) return cap_fail(err, CAP_E_INTERNAL, "the world is not attested yet");
  world_sources w = {.h = h, .report = h->attestation};
  cap_code rc = hash_sources(h, &w, err);
  if (!rc)
    rc = statement_schema_build(statement_schema_world, world_value, &w, "world predicate", predicate, err);
  json_decref(w.shared_objects);
  return rc;
}

void world_predicate_capsule_subjects_as(const loaded_capsule *cap, const char *id, json_t *subjects) {
  char name[4400];
  /* Only digests that are known: a manifest refused before its integrity
   * field was read pins no artifact digest. */
  if (cap->m.entry && cap->m.sha256 && digest_is_sha256_hex(cap->m.sha256) &&
      so_is_plain_relative(cap->m.entry)) {
    snprintf(name, sizeof name, "%s/%s", id, cap->m.entry);
    statement_add_subject(subjects, name, cap->m.sha256);
  }
  if (cap->manifest_sha256[0]) {
    snprintf(name, sizeof name, "%s/capsule.json", id);
    statement_add_subject(subjects, name, cap->manifest_sha256);
  }
  if (cap->bundle_sha256[0]) {
    const char *base = strrchr(cap->cfg->bundle, '/');
    snprintf(name, sizeof name, "%s/%s", id, base ? base + 1 : cap->cfg->bundle);
    statement_add_subject(subjects, name, cap->bundle_sha256);
  }
}

void world_predicate_capsule_subjects(const loaded_capsule *cap, json_t *subjects) {
  world_predicate_capsule_subjects_as(cap, cap->m.id, subjects);
}

cap_code world_predicate_subjects(const host *h, json_t **subjects, cap_error *err) {
  *subjects = json_array();
  for (size_t i = 0; i < h->cap_count; i++) world_predicate_capsule_subjects(&h->caps[i], *subjects);
  if (h->cap_count) return CAP_OK;
  char self[65];
  if (world_predicate_host_digest(self, err)) return err->code;
  statement_add_subject(*subjects, "capsule-host", self);
  return CAP_OK;
}
