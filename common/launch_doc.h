/* The launch document: the only input of capsule-launcher. The host writes
 * it; the launcher trusts nothing in it that it cannot re-verify (every
 * source is reopened without symlinks and must match dev/ino, the guest
 * artifact also its digest). Node permissions derive only from labels. */
#ifndef LAUNCH_DOC_H
#define LAUNCH_DOC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "cap_error.h"
#include "launch_contract.h"

typedef enum { LD_RUNTIME, LD_GUEST, LD_WORKSPACE_READ, LD_LOADER, LD_SNAPSHOT } ld_label;

typedef struct {
  ld_label label;
  const char *source; /* runtime, guest, loader, snapshot: absolute path without symlinks */
  const char *root;   /* workspace-read: absolute workspace root */
  const char *path;   /* workspace-read: relative path below root */
  const char *dest;   /* path inside the cell */
  unsigned long long dev, ino;
  const char *sha256; /* guest, loader, snapshot: the launcher re-hashes the file */
} ld_mount;

/* Per-process resource ceilings the launcher sets (setrlimit) before it
 * execs bwrap; every process of the cell inherits them. */
typedef struct {
  long long memory_bytes; /* RLIMIT_DATA: heap, off-heap buffers, wasm, stacks */
  long long cpu_seconds;  /* RLIMIT_CPU soft; the hard limit is one second more */
  long long file_bytes;   /* RLIMIT_FSIZE */
  long long open_files;   /* RLIMIT_NOFILE */
} ld_ceilings;

typedef struct {
  json_t *json; /* parsed documents: owns every string below; NULL when the
                   host fills the struct to encode it (borrowed strings) */
  const char *bwrap_path;
  unsigned long long bwrap_dev, bwrap_ino;
  long long tmpfs_bytes;
  long long max_old_space_mb;
  const char *permission_flag; /* "--permission" or "--experimental-permission" */
  const char *seccomp_sha256;  /* digest of the filter the host attested */
  bool disable_sigusr1;
  ld_ceilings ceilings;
  ld_mount mounts[LAUNCH_DOC_MAX_MOUNTS];
  size_t mount_count;
} launch_doc;

/* The document as compact JSON (malloc'd), or NULL when doc breaks a rule
 * launch_doc_parse would refuse it for (the host never writes a document
 * the launcher must reject). */
char *launch_doc_encode(const launch_doc *doc, cap_error *err);

/* Parses and validates; on failure CAP_E_LAUNCH_DOC_INVALID. */
cap_code launch_doc_parse(const char *buf, size_t len, launch_doc *doc, cap_error *err);
void launch_doc_free(launch_doc *doc);
const char *launch_label_name(ld_label label);

#endif
