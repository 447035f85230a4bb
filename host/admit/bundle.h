/* Capsule bundles: a gzip-compressed tar holding exactly capsule.json and
 * the artifact it names. Every archive is treated as hostile: only regular
 * entries with plain names, no duplicates, nothing else, and the sizes are
 * checked while streaming, so a decompression bomb cannot fill memory. */
#ifndef BUNDLE_H
#define BUNDLE_H

#include <stddef.h>

#include "cap_error.h"

/* Pointers only: declared, not included (C11 allows the repeat). */
typedef struct host_limits host_limits;

#define BUNDLE_MANIFEST_NAME "capsule.json"

typedef struct bundle_contents {
  char *manifest;
  size_t manifest_len;
  char *other; /* the one entry besides capsule.json, if any */
  size_t other_len;
  char other_name[4097];
  char sha256[65]; /* of the bundle's bytes as read: what an attestation names */
} bundle_contents;

cap_code bundle_read_fd(int fd, const host_limits *lim, bundle_contents *out, cap_error *err);
cap_code bundle_read_memory(const void *buf, size_t len, const host_limits *lim, bundle_contents *out,
                            cap_error *err);
/* Opens path without symlinks, requires a regular file, then reads it. */
cap_code bundle_read_path(const char *path, const host_limits *lim, bundle_contents *out, cap_error *err);
void bundle_contents_free(bundle_contents *b);

/* Writes a deterministic bundle (sorted entries, mtime 0, uid/gid 0, mode
 * 0644, no gzip timestamp) of manifest bytes and artifact bytes to fd. */
cap_code bundle_write_fd(int fd, const char *manifest, size_t manifest_len, const char *artifact_name,
                         const char *artifact, size_t artifact_len, cap_error *err);
/* The same at out_path: written beside it under a fresh name, then renamed
 * into place (a link at out_path is replaced, never written through). */
cap_code bundle_write(const char *out_path, const char *manifest, size_t manifest_len,
                      const char *artifact_name, const char *artifact, size_t artifact_len, cap_error *err);

#endif
