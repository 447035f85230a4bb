/* Attestation of the host's world and of a cell (attest.c): what
 * `attest`, `doctor` and activation run before any guest code. */
#ifndef ATTEST_H
#define ATTEST_H

#include <jansson.h>

#include "cap_error.h"

/* Pointers only: declared, not included (C11 allows the repeat). */
typedef struct host host;
struct cell;

/* Resolves node and bwrap and runs both attestation phases, the cell phase
 * in an attestation-only cell. */
cap_code attest_run(host *h, cap_error *err);
/* The two phases apart (attest.c): the world phase (and staging of the
 * loader), then the cell phase on a started cell whose loader has not
 * loaded its guest: activation probes in the first capsule's describe cell. */
cap_code attest_world(host *h, cap_error *err);
cap_code attest_cell(host *h, struct cell *c, cap_error *err);
/* The cell phase in a cell whose guest is never loaded (`attest`, `doctor`):
 * probe, shut down, join, publish. */
cap_code attest_only_cell(host *h, cap_error *err);
/* The cell phase without publishing: fills report (its cell, namespaces,
 * node flags, digests, ceilings), in a started cell c whose loader waits,
 * or in an attestation-only cell of its own (the startup snapshot's check). */
cap_code attest_cell_report(host *h, struct cell *c, json_t *report, cap_error *err);
cap_code attest_only_cell_report(host *h, json_t *report, cap_error *err);

#endif
