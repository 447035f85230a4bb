/* The host's side of the launch contract: a launch_doc filled from what
 * the host verified, encoded by common/launch_doc.c. */
#include "launch_document.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admit/capsule.h"
#include "admit/config.h"
#include "admit/staging.h"
#include "admit/workspace.h"
#include "host_state.h"
#include "launch_doc.h"
#include "runtime_scan.h"

/* The ceilings of every cell, from the config (and what the attested Node
 * reserves at start, which no guest can use): written into each launch
 * document and stated in the attestation report. */
static ld_ceilings cell_ceilings(const host_limits *lim, long long node_reserved_data_mb) {
  return (ld_ceilings){.memory_bytes = (lim->max_cell_memory_mb + node_reserved_data_mb) << 20,
                       .cpu_seconds = lim->max_cell_cpu_seconds,
                       .file_bytes = lim->max_cell_file_bytes,
                       .open_files = lim->max_cell_open_files};
}

static cap_code add_mount(launch_doc *doc, ld_mount m, cap_error *err) {
  if (doc->mount_count == LAUNCH_DOC_MAX_MOUNTS)
    return cap_fail(err, CAP_E_LAUNCH_DOC_INVALID, "more than %d mounts in one cell", LAUNCH_DOC_MAX_MOUNTS);
  doc->mounts[doc->mount_count++] = m;
  return CAP_OK;
}

/* A file of the runtime (Node, a shared object), pinned by (dev, inode). */
static cap_code add_runtime(launch_doc *doc, const file_identity *f, const char *dest, cap_error *err) {
  ld_mount m = {.label = LD_RUNTIME, .source = f->path, .dest = dest, .dev = f->dev, .ino = f->ino};
  return add_mount(doc, m, err);
}

/* A staged file (loader, snapshot, guest), pinned by (dev, inode) and digest. */
static cap_code add_staged(launch_doc *doc, ld_label label, const staged_file *f, const char *dest,
                           cap_error *err) {
  ld_mount m = {
      .label = label, .source = f->path, .dest = dest, .dev = f->dev, .ino = f->ino, .sha256 = f->sha256};
  return add_mount(doc, m, err);
}

char *launch_document_build(const host *h, const staged_file *guest, const loaded_capsule *cap,
                            cap_error *err) {
  const host_limits *lim = &h->cfg.limits;
  launch_doc *doc = calloc(1, sizeof *doc); /* 256 mounts: not for the stack */
  size_t files = cap ? cap->workspace.count : 0;
  char **dests = calloc(files ? files : 1, sizeof *dests);
  if (!doc || !dests) {
    free(doc);
    free(dests);
    cap_fail(err, CAP_E_INTERNAL, "out of memory");
    return NULL;
  }
  doc->bwrap_path = h->bwrap.path;
  doc->bwrap_dev = h->bwrap.dev;
  doc->bwrap_ino = h->bwrap.ino;
  doc->tmpfs_bytes = lim->tmpfs_bytes;
  doc->max_old_space_mb = lim->max_old_space_size_mb;
  doc->permission_flag = h->permission_flag;
  doc->disable_sigusr1 = h->disable_sigusr1;
  doc->seccomp_sha256 = h->seccomp_sha256;
  doc->ceilings = cell_ceilings(lim, h->node_reserved_data_mb);
  cap_code rc = add_runtime(doc, &h->node.executable, LAUNCH_NODE_DEST, err);
  for (size_t i = 0; !rc && i < h->node.object_count; i++)
    rc = add_runtime(doc, &h->node.objects[i].source, h->node.objects[i].dest, err);
  if (!rc) rc = add_staged(doc, LD_LOADER, &h->loader, LAUNCH_LOADER_DEST, err);
  if (!rc && h->snapshot.path[0]) rc = add_staged(doc, LD_SNAPSHOT, &h->snapshot, LAUNCH_SNAPSHOT_DEST, err);
  if (!rc) rc = add_staged(doc, LD_GUEST, guest, LAUNCH_GUEST_DEST, err);
  for (size_t i = 0; !rc && i < files; i++) {
    const workspace_file *f = &cap->workspace.files[i];
    /* The destination is derived from the grant, as the parser requires. */
    size_t n = strlen(LAUNCH_WORKSPACE_DIR) + strlen(f->path) + 1;
    dests[i] = malloc(n);
    if (!dests[i]) {
      rc = cap_fail(err, CAP_E_INTERNAL, "out of memory");
      break;
    }
    snprintf(dests[i], n, "%s%s", LAUNCH_WORKSPACE_DIR, f->path);
    ld_mount m = {.label = LD_WORKSPACE_READ,
                  .root = cap->cfg->workspace_root,
                  .path = f->path,
                  .dest = dests[i],
                  .dev = f->dev,
                  .ino = f->ino};
    rc = add_mount(doc, m, err);
  }
  char *text = rc ? NULL : launch_doc_encode(doc, err);
  for (size_t i = 0; i < files; i++) free(dests[i]);
  free(dests);
  free(doc);
  return text;
}

json_t *launch_document_ceilings(const host_limits *lim, long long node_reserved_data_mb) {
  ld_ceilings c = cell_ceilings(lim, node_reserved_data_mb);
  json_t *r = json_pack(
      "{s:{s:I,s:s,s:I},s:{s:I,s:s},s:{s:I,s:s},s:{s:I,s:s},s:{s:i,s:s},s:{s:n,s:s},s:{s:b,s:s}}",
      "memoryBytes", "limit", (json_int_t)c.memory_bytes, "mechanism",
      "RLIMIT_DATA per process (heap, off-heap buffers, wasm memory, thread stacks)", "nodeReservedBytes",
      (json_int_t)(node_reserved_data_mb << 20), "cpuSeconds", "limit", (json_int_t)c.cpu_seconds,
      "mechanism", "RLIMIT_CPU (SIGXCPU, SIGKILL one second later)", "fileBytes", "limit",
      (json_int_t)c.file_bytes, "mechanism", "RLIMIT_FSIZE", "openFiles", "limit", (json_int_t)c.open_files,
      "mechanism", "RLIMIT_NOFILE", "processes", "limit", 1, "mechanism",
      "seccomp: fork, vfork and clone without CLONE_THREAD fail with EPERM", "threads", "limit", "mechanism",
      "no count; each thread stack is counted by RLIMIT_DATA", "cgroup", "used", 0, "mechanism",
      "none: no cgroup is created, joined or modified (see THREAT_MODEL, Not claimed)");
  /* Every ceiling a cell gets is stated, so that changing any is drift. */
  if (r) {
    json_object_set_new(r, "heapBytes",
                        json_pack("{s:I,s:s}", "limit", (json_int_t)(lim->max_old_space_size_mb << 20),
                                  "mechanism", "V8 --max-old-space-size"));
    json_object_set_new(r, "tmpfsBytes",
                        json_pack("{s:I,s:s}", "limit", (json_int_t)lim->tmpfs_bytes, "mechanism",
                                  "bwrap --size of the cell's /tmp tmpfs"));
  }
  return r;
}
