/* A warm cell, as its supervisor runs it (the child side of
 * supervisor_start_warm): the cell is started, its guest loaded and
 * described (or, with warmCellPreload 0, only its loader, waiting for
 * "load"); it waits for the one call the serve loop hands over, serves it
 * and ends. */
#ifndef WARM_CELL_H
#define WARM_CELL_H

#include <jansson.h>
#include <stddef.h>

#include "cap_error.h"

/* Pointers only: declared, not included (C11 allows the repeat). */
typedef struct host host;

/* The largest assignment ({"tool","input"}) the serve loop hands a warm
 * cell: what a pipe accepts in one non-blocking write; larger calls run in
 * a fresh cell. */
#define WARM_ASSIGNMENT_MAX 65536

typedef enum {
  WARM_CALL_OK,     /* *result holds the call's result */
  WARM_CALL_FAILED, /* the call failed: err says why (as call_tool's) */
  WARM_IDLE_FAILED, /* the cell failed before any call was given: err */
  WARM_RECYCLED,    /* no call came (idle age, shutdown): cell shut down */
} warm_outcome;

warm_outcome warm_cell_run(host *h, size_t cap_index, int assign_fd, json_t **result, cap_error *err);

#endif
