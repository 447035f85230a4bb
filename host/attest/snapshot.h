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

/* In the forked job: builds, stages and verifies; the verdict
 * (call/verdict.h) is a snapshot {"path","dev","ino","sha256","buildMs",
 * "verifyMs"} or an error. */
json_t *snapshot_job(host *h);
/* In the serving host: reopens the staged blob the verdict names, requires
 * the same dev/inode and digest, and mounts it in every cell from now on;
 * the attestation report's startupSnapshot says what happened either way. */
cap_code snapshot_adopt(host *h, const json_t *verdict, cap_error *err);
#endif
