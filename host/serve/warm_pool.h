/* The warm cells serve keeps (warm_pool.c). */
#ifndef WARM_POOL_H
#define WARM_POOL_H

#include <stdbool.h>
#include <stddef.h>

#include "cap_error.h"
#include "serve_poll.h"
#include "server.h"

/* Keep warmCellsPerCapsule started per capsule; hand one of capsule
 * cap_index a call (false: none idle, or the call is too large to hand
 * over: start a fresh cell); watch them in the poll set; reap the ones that
 * exited; recycle those past warmCellMaxIdleMs (returns ms until the next
 * one is due, -1 none); recycle all at shutdown. */
void warm_pool_fill(server *s);
bool warm_pool_take(server *s, size_t cap_index, const char *tool, const json_t *input, call_supervisor *out);
void warm_pool_watch(const server *s, serve_poll_set *p);
void warm_pool_reap(server *s, const serve_poll_set *p);
int warm_pool_expire(server *s);
void warm_pool_recycle_all(server *s);
void warm_pool_free(server *s);
/* A warm cell of capsule cap_index that had taken a call failed before the
 * call was given to its guest (while warming or idle): logged as the idle
 * cell's failure, and its capsule waits before the next warm cell, as a
 * reaped one does. */
void warm_pool_note_failed_before_call(server *s, size_t cap_index, cap_code code, const char *message);

#endif
