/* The cells' startup snapshot (docs/RFC.md section 8): Node rejects its
 * whole built-in code cache under any non-default V8 heap flag, which every
 * cell has; a snapshot built by the attested Node with exactly the cell's
 * V8 flags carries it again. Built once by `serve`, in a forked job that
 * runs no guest code; adopted only after a cell has run from it and passed
 * the attestation probe; never a blob the host did not build and hash. */
#ifndef SNAPSHOT_H
#define SNAPSHOT_H

#include <jansson.h>

#include "cap_error.h"

/* Pointers only: declared, not included (C11 allows the repeat). */
typedef struct host host;

#define SNAPSHOT_NAME "snapshot.blob"
#define SNAPSHOT_BUILDING_NAME "snapshot.building"

/* In the forked job: builds, stages and verifies; on success *built is
 * {"path","dev","ino","sha256","buildMs","verifyMs"} (the supervisor
 * carries it home in its verdict). */
cap_code snapshot_job(host *h, json_t **built, cap_error *err);

/* What the serving host learnt of the job, read from its verdict. */
typedef struct {
  cap_code code;          /* the job's outcome */
  const char *message;    /* its failure; "" on success */
  const json_t *snapshot; /* on success: what snapshot_job built */
} snapshot_outcome;

/* In the serving host: reopens the staged blob the job names, requires
 * the same dev/inode and digest, and mounts it in every cell from now on;
 * the attestation report's startupSnapshot says what happened either way. */
cap_code snapshot_adopt(host *h, const snapshot_outcome *job, cap_error *err);
#endif
