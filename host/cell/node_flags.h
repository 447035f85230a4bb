/* The Node flags chosen from the attested version (node_flags.c). */
#ifndef NODE_FLAGS_H
#define NODE_FLAGS_H

#include "cap_error.h"

/* Pointers only: declared, not included (C11 allows the repeat). */
typedef struct host host;

/* Sets h's permission flag, SIGUSR1 choice and reserved data from
 * h->node_version: ATTEST_OUTPUT_INVALID when unparseable,
 * RUNTIME_UNSUPPORTED when older than the permission model. */
cap_code node_flags_select(host *h, cap_error *err);

#endif
