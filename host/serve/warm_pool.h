/* The warm cells serve keeps (warm_pool.c). */
#ifndef WARM_POOL_H
#define WARM_POOL_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

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

#endif
