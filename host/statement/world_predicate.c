#include "world_predicate.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "admit/capsule.h"
#include "digest.h"
#include "host_state.h"
#include "runtime_scan.h"
#include "safe_open.h"
#include "statement.h"
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

static json_t *pinned_file(const char *path, const char *hex) {
  return json_pack("{s:s,s:s}", "path", path, "sha256", hex);
}

cap_code world_predicate(const host *h, json_t **predicate, cap_error *err) {
  *predicate = NULL;
  const json_t *r = h->attestation;
  if (!r) return cap_fail(err, CAP_E_INTERNAL, "the world is not attested yet");
  char self[65], node[65], bwrap[65], so[65], launcher[65], probe[65];
  /* capsule-launcher and capsule-probe run in every cell's start: trusted
   * code beside capsule-host, pinned like it. */
  if (world_predicate_host_digest(self, err) || file_digest(h->node.executable.path, node, err) ||
      file_digest(h->bwrap.path, bwrap, err) || file_digest(h->launcher, launcher, err) ||
      file_digest(h->probe, probe, err))
    return err->code;
  json_t *objects = json_array();
  for (size_t i = 0; i < h->node.object_count; i++) {
    const shared_object *o = &h->node.objects[i];
    if (file_digest(o->source.path, so, err)) {
      json_decref(objects);
      return err->code;
    }
    json_array_append_new(objects,
                          json_pack("{s:s,s:s,s:s}", "dest", o->dest, "path", o->source.path, "sha256", so));
  }
  const json_t *host_view = json_object_get(r, "host"), *cell = json_object_get(r, "cell");
  *predicate = json_pack(
      "{s:{s:s,s:s,s:s,s:s},s:{s:s,s:s,s:s,s:o},s:o,s:{s:O,s:O},s:O,s:O,s:O,s:O,s:O,"
      "s:{s:{s:O,s:O,s:O,s:O},s:{s:o,s:o},s:O,s:O,s:O}}",
      "capsuleHost", "version", CAPSULE_VERSION, "sha256", self, "launcherSha256", launcher, "probeSha256",
      probe, "node", "version", h->node_version, "path", h->node.executable.path, "sha256", node,
      "sharedObjects", objects, "bwrap", pinned_file(h->bwrap.path, bwrap), "cell", "execPath",
      json_object_get(cell, "execPath"), "permissionModel", json_object_get(cell, "permissionModel"),
      "nodeFlags", json_object_get(r, "nodeFlags"), "cellLoaderSha256",
      json_object_get(r, "cellLoaderSha256"), "seccompSha256", json_object_get(r, "seccompSha256"),
      "ceilings", json_object_get(r, "ceilings"), "cellWorld", json_object_get(r, "cellWorld"), "observed",
      "host", "mountNamespace", json_object_get(host_view, "mountNamespace"), "root",
      json_object_get(host_view, "root"), "uid", json_object_get(host_view, "uid"), "gid",
      json_object_get(host_view, "gid"), "identities", "node", runtime_identity_json(&h->node.executable),
      "bwrap", runtime_identity_json(&h->bwrap), "cell", cell, "cellNamespaces",
      json_object_get(r, "namespaces"), "startupSnapshot", json_object_get(r, "startupSnapshot"));
  if (!*predicate) return cap_fail(err, CAP_E_INTERNAL, "the world predicate cannot be built");
  json_object_set(json_object_get(*predicate, "observed"), "kernelAbi",
                  json_object_get(host_view, "kernelAbi"));
  /* What this Node line's permission model refuses (measured in the cell):
   * compared as part of the world, as the Node binary already is. */
  json_object_set(json_object_get(*predicate, "cell"), "permissionScopes",
                  json_object_get(cell, "permissionScopes"));
  /* Statement files name no host path by accident: these are the paths the
   * host resolved, which a reviewer must see to know which Node ran. */
  return CAP_OK;
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
