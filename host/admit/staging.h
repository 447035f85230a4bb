/* Private staging: a fresh 0700 directory holding read-only copies of the
 * exact bytes that were hashed. Nothing is executed from anywhere else. */
#ifndef STAGING_H
#define STAGING_H

#include <stddef.h>

#include "cap_error.h"
#include "digest.h"

#define STAGING_MAX_FILES 260

typedef struct staged_file {
  char path[4096];
  unsigned long long dev, ino;
  char sha256[SHA256_HEX_LEN + 1];
} staged_file;

/* Every staging directory holds this file, flock'ed by its host for the
 * host's lifetime (and its forked supervisors', which share the lock). */
#define STAGING_LOCK_NAME "owner.lock"
#define STAGING_PREFIX "dsh-capsule-"

typedef struct {
  char dir[4096];
  int dirfd;
  int lockfd;
  char names[STAGING_MAX_FILES][32];
  size_t count;
} staging;

/* Sweeps staging left by dead hosts (see staging_sweep), then creates a
 * fresh directory under $TMPDIR and takes its owner lock. */
cap_code staging_create(staging *s, cap_error *err);
/* Removes $TMPDIR/dsh-capsule-* directories of this user whose owner lock
 * is free (their host was killed); a live host's lock is held, and a
 * directory without the lock file is not ours to judge. Returns how many
 * were removed. Best effort: never fails activation. */
int staging_sweep(const char *base);
/* Writes bytes as a new 0400 file named `name` and records its identity. */
cap_code staging_add(staging *s, const char *name, const void *bytes, size_t len, staged_file *out,
                     cap_error *err);
/* Records a name that a forked job of this host may create in the
 * directory (the startup snapshot), so that removal covers it. */
cap_code staging_reserve(staging *s, const char *name, cap_error *err);
/* Removes every staged file and the directory. Idempotent. */
void staging_remove(staging *s);
/* Async-signal-safe variant for the fatal-signal handler. */
void staging_remove_from_signal(staging *s);

#endif
