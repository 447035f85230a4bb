#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "launch_doc.h"

static json_t *mount(const char *label, const char *source, const char *dest,
                     unsigned long long dev, unsigned long long ino) {
  return json_pack("{s:s,s:s,s:s,s:I,s:I}", "label", label, "source", source, "dest", dest, "dev",
                   (json_int_t)dev, "ino", (json_int_t)ino);
}

char *host_launch_doc(const host *h, const staged_file *guest, const loaded_capsule *cap) {
  json_t *mounts = json_array();
  const file_identity *exe = &h->node.executable;
  json_array_append_new(mounts, mount("runtime", exe->path, LAUNCH_NODE_DEST, exe->dev, exe->ino));
  for (size_t i = 0; i < h->node.object_count; i++) {
    const shared_object *o = &h->node.objects[i];
    json_array_append_new(mounts,
                          mount("runtime", o->source.path, o->dest, o->source.dev, o->source.ino));
  }
  json_t *g = mount("guest", guest->path, CELL_GUEST_DEST, guest->dev, guest->ino);
  json_object_set_new(g, "sha256", json_string(guest->sha256));
  json_array_append_new(mounts, g);
  for (size_t i = 0; cap && i < cap->file_count; i++) {
    const workspace_file *f = &cap->files[i];
    char dest[4200];
    snprintf(dest, sizeof dest, "%s%s", LAUNCH_WORKSPACE_DIR, f->path);
    json_array_append_new(
        mounts, json_pack("{s:s,s:s,s:s,s:s,s:I,s:I}", "label", "workspace-read", "root",
                          cap->cfg->workspace_root, "path", f->path, "dest", dest, "dev",
                          (json_int_t)f->dev, "ino", (json_int_t)f->ino));
  }
  const host_limits *lim = &h->cfg.limits;
  json_t *ceilings = json_pack("{s:I,s:I,s:I,s:I}", "memoryBytes",
                               (json_int_t)lim->max_cell_memory_mb << 20, "cpuSeconds",
                               (json_int_t)lim->max_cell_cpu_seconds, "fileBytes",
                               (json_int_t)lim->max_cell_file_bytes, "openFiles",
                               (json_int_t)lim->max_cell_open_files);
  json_t *doc = json_pack(
      "{s:s,s:{s:s,s:I,s:I},s:I,s:{s:s,s:I,s:b},s:s,s:o,s:o}", "protocol", LAUNCH_DOC_PROTOCOL, "bwrap",
      "path", h->bwrap.path, "dev", (json_int_t)h->bwrap.dev, "ino", (json_int_t)h->bwrap.ino,
      "tmpfsBytes", (json_int_t)h->cfg.limits.tmpfs_bytes, "node", "permissionFlag",
      h->permission_flag, "maxOldSpaceSizeMb", (json_int_t)h->cfg.limits.max_old_space_size_mb,
      "disableSigusr1", h->disable_sigusr1, "seccompSha256", h->seccomp_sha256, "ceilings", ceilings, "mounts", mounts);
  char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
  json_decref(doc);
  return text;
}

json_t *host_ceilings_report(const host_limits *lim) {
  return json_pack(
      "{s:{s:I,s:s},s:{s:I,s:s},s:{s:I,s:s},s:{s:I,s:s},s:{s:i,s:s},s:{s:n,s:s},s:{s:b,s:s}}",
      "memoryBytes", "limit", (json_int_t)lim->max_cell_memory_mb << 20, "mechanism",
      "RLIMIT_DATA per process (heap, off-heap buffers, wasm memory, thread stacks)",
      "cpuSeconds", "limit", (json_int_t)lim->max_cell_cpu_seconds, "mechanism",
      "RLIMIT_CPU (SIGXCPU, SIGKILL one second later)", "fileBytes", "limit",
      (json_int_t)lim->max_cell_file_bytes, "mechanism", "RLIMIT_FSIZE", "openFiles", "limit",
      (json_int_t)lim->max_cell_open_files, "mechanism", "RLIMIT_NOFILE", "processes", "limit", 1,
      "mechanism", "seccomp: fork, vfork and clone without CLONE_THREAD fail with EPERM",
      "threads", "limit", "mechanism", "no count; each thread stack is counted by RLIMIT_DATA",
      "cgroup", "used", 0, "mechanism",
      "none: no cgroup is created, joined or modified (see THREAT_MODEL, Not claimed)");
}
