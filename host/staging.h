/* Private staging: a fresh 0700 directory holding read-only copies of the
 * exact bytes that were hashed. Nothing is executed from anywhere else. */
#ifndef STAGING_H
#define STAGING_H

#include <stddef.h>

#include "cap_error.h"
#include "digest.h"

#define STAGING_MAX_FILES 260

typedef struct {
  char path[4096];
  unsigned long long dev, ino;
  char sha256[SHA256_HEX_LEN + 1];
} staged_file;

typedef struct {
  char dir[4096];
  int dirfd;
  char names[STAGING_MAX_FILES][32];
  size_t count;
} staging;

cap_code staging_create(staging *s, cap_error *err);
/* Writes bytes as a new 0400 file named `name` and records its identity. */
cap_code staging_add(staging *s, const char *name, const void *bytes, size_t len,
                     staged_file *out, cap_error *err);
/* Removes every staged file and the directory. Idempotent. */
void staging_remove(staging *s);
/* Async-signal-safe variant for the fatal-signal handler. */
void staging_remove_from_signal(staging *s);

#endif
