/* A guest's cell up to its describe answer (described_cell.c). */
#ifndef DESCRIBED_CELL_H
#define DESCRIBED_CELL_H

#include <jansson.h>
#include <stdbool.h>

#include "cap_error.h"

/* Pointers only: declared, not included (C11 allows the repeat). */
typedef struct host host;
typedef struct loaded_capsule loaded_capsule;
struct cell;

/* A fresh cell for cap that has answered describe within startupTimeoutMs
 * (described_cell.c). On success the cell is running and *reply holds its
 * describe.result; *started false means no cell needs joining. */
cap_code described_cell_start(host *h, loaded_capsule *cap, struct cell *c, bool *started, json_t **reply,
                              cap_error *err);
/* The second half of it, for a started cell whose loader waits: "load",
 * then describe within startupTimeoutMs from now. */
cap_code described_cell_load(struct cell *c, json_t **reply, cap_error *err);

#endif
