/* What a cell is given: its launch document (launch_document.c: mounts,
 * ceilings, Node flags), the files staged for every cell (cell_files.c),
 * the Node flags chosen from the attested version (node_flags.c), and the
 * one way a cell for a guest starts (cell_for_capsule.c). */
#ifndef CELL_GIVEN_H
#define CELL_GIVEN_H

#include <jansson.h>

#include "cap_error.h"

/* Pointers only: declared, not included (C11 allows the repeat). */
typedef struct host host;
typedef struct cell cell;
typedef struct staged_file staged_file;
typedef struct loaded_capsule loaded_capsule;
typedef struct host_limits host_limits;

/* Stages the cell loader and the attestation-only guest (once). */
cap_code host_stage_cell_files(host *h, cap_error *err);
/* Sets h's permission flag, SIGUSR1 choice and reserved data from
 * h->node_version: ATTEST_OUTPUT_INVALID when unparseable,
 * RUNTIME_UNSUPPORTED when older than the permission model. */
cap_code host_select_node_flags(host *h, cap_error *err);
/* The one start of a cell (cell_for_capsule.c): the launch document for
 * guest (cap NULL: the attestation-only guest) given to a new launcher. */
cap_code host_start_cell(const host *h, const staged_file *guest, const loaded_capsule *cap,
                         cell *c, cap_error *err);
/* Launch document for a guest artifact; cap may be NULL (the cell probe). */
char *host_launch_doc(const host *h, const staged_file *guest, const loaded_capsule *cap,
                      cap_error *err);
/* The ceilings every cell runs under and the mechanism enforcing each, for
 * the attestation report (the launch document carries the same values). */
json_t *host_ceilings_report(const host_limits *lim, long long node_reserved_data_mb);

#endif
