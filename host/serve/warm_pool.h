/* The warm cells serve keeps (warm_pool.c). */
#ifndef WARM_POOL_H
#define WARM_POOL_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

#include "cap_error.h"
#include "server.h"

/* Keep warmCellsPerCapsule started per capsule;
 * hand one a call (false: none idle for that tool's capsule, or the call is
 * too large to hand over: start a fresh cell); poll descriptors; reap the
 * ones that exited; recycle those past warmCellMaxIdleMs (returns ms until
 * the next one is due, -1 none); recycle all at shutdown. */
void warm_pool_fill(server *s);
bool warm_pool_take(server *s, const char *tool, const json_t *input, call_supervisor *out);
size_t warm_pool_pollfds(const server *s, struct pollfd *p);
void warm_pool_reap(server *s, const struct pollfd *p);
int warm_pool_expire(server *s);
void warm_pool_recycle_all(server *s);
void warm_pool_free(server *s);
/* A warm cell that had taken tool's call failed before the call was given
 * to its guest (while warming or idle): logged as the idle cell's failure,
 * and its capsule waits before the next warm cell, as a reaped one does. */
void warm_pool_note_failed_before_call(server *s, const char *tool, cap_code code, const char *message);

#endif
