/* A cell's launch document (launch_document.c): mounts, ceilings, Node
 * flags, for the launcher to check and apply. */
#ifndef LAUNCH_DOCUMENT_H
#define LAUNCH_DOCUMENT_H

#include <jansson.h>

#include "cap_error.h"

/* Pointers only: declared, not included (C11 allows the repeat). */
typedef struct host host;
typedef struct staged_file staged_file;
typedef struct loaded_capsule loaded_capsule;
typedef struct host_limits host_limits;

/* Launch document for a guest artifact; cap may be NULL (the cell probe). */
char *launch_document_build(const host *h, const staged_file *guest, const loaded_capsule *cap,
                            cap_error *err);
/* The ceilings every cell runs under and the mechanism enforcing each, for
 * the attestation report (the launch document carries the same values). */
json_t *launch_document_ceilings(const host_limits *lim, long long node_reserved_data_mb);

#endif
