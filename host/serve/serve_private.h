/* Shared inside host/serve/ only: the output queue, the warm pool and the
 * audit log, which the serve files use and nothing outside them may. */
#ifndef SERVE_PRIVATE_H
#define SERVE_PRIVATE_H

#include <poll.h>

#include "server.h"

/* Output (serve_output.c): JSON-RPC messages queued for stdout. */
size_t serve_out_high_water(const server *s);
void serve_send(server *s, json_t *msg);
void serve_send_result(server *s, const json_t *id, json_t *result);
void serve_send_error(server *s, const json_t *id, int code, const char *message,
                      const char *cap);
/* An error whose data is not {"code": CAP_CODE} (takes data's reference). */
void serve_send_error_data(server *s, const json_t *id, int code, const char *message,
                           json_t *data);
/* Writes what stdout accepts now; never blocks. */
void serve_flush(server *s);
/* Output is at or above the high-water mark: no request line is handled. */
bool serve_backlogged(const server *s);

/* Warm cells (warm_pool.c): keep warmCellsPerCapsule started per capsule;
 * hand one a call (false: none idle for that tool's capsule, or the call is
 * too large to hand over: start a fresh cell); poll descriptors; reap the
 * ones that exited; recycle those past warmCellMaxIdleMs (returns ms until
 * the next one is due, -1 none); recycle all at shutdown. */
void warm_fill(server *s);
bool warm_take(server *s, const char *tool, const json_t *input, call_supervisor *out);
size_t warm_pollfds(const server *s, struct pollfd *p);
void warm_reap(server *s, const struct pollfd *p);
int warm_expire(server *s);
void warm_recycle_all(server *s);
void warm_free(server *s);

/* One audit line per tools/call (call_log.c): tool, "ok" or the code, the
 * milliseconds since since_ms (0: none), and how it ran or why it did not. */
void serve_log_call(const char *tool, const char *outcome, long long since_ms, const char *how);

#endif
