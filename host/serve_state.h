/* Shared by the serve files only: the server's state, its output queue
 * and the scheduler entry points the MCP dispatch calls. */
#ifndef SERVE_STATE_H
#define SERVE_STATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <poll.h>

#include "call_supervisor.h"
#include "host.h"

#define JSONRPC_PARSE_ERROR -32700
#define JSONRPC_INVALID_REQUEST -32600
#define JSONRPC_METHOD_NOT_FOUND -32601
#define JSONRPC_INVALID_PARAMS -32602
#define JSONRPC_INTERNAL_ERROR -32603
#define JSONRPC_SERVER_BUSY -32001
#define MCP_UNSUPPORTED_PROTOCOL_VERSION -32022

/* What a tools/call carries besides its tool and input: the client's
 * progress token (string or integer, or NULL), and whether it came in the
 * stateless 2026-07-28 form (its result then carries resultType). */
typedef struct {
  const json_t *progress_token;
  bool modern;
} call_origin;

typedef struct {
  json_t *id;
  char *tool;
  json_t *input;
  json_t *progress_token; /* NULL: no progress notifications */
  long long arrived_ms, started_ms;
  bool running, cancelled, modern;
  bool warm; /* runs in a warm cell */
  call_supervisor sup;
} call_slot;

/* How the scheduler starts and cancels a call: the forked call supervisor
 * (call_supervisor.c) in serve_run; a stand-in in fuzz/harness/fuzz_mcp.c,
 * so the protocol and the scheduler run there without forking. */
typedef struct {
  cap_code (*start)(host *h, const char *tool, const json_t *input, call_supervisor *sup,
                    cap_error *err);
  void (*cancel)(call_supervisor *sup);
  /* Warm cells (warm_pool.c); NULL: none are kept. */
  cap_code (*start_warm)(host *h, size_t cap_index, call_supervisor *sup, cap_error *err);
  /* The startup snapshot job; NULL: cells run without a snapshot. */
  cap_code (*start_snapshot)(host *h, call_supervisor *sup, cap_error *err);
} call_runner;

/* A warm cell waiting for its call, as the serve loop sees it. */
typedef struct {
  call_supervisor sup;
  size_t cap_index;
  long long started_ms;
  bool retiring; /* recycled (idle age, shutdown): waiting for it to exit */
} warm_slot;

typedef struct {
  host *h;
  const call_runner *runner;
  json_t *registry;
  call_slot *slots; /* running first, then queued, in arrival order */
  size_t count, cap;
  size_t running;
  bool initialized, shutting_down, cancel_sent;
  char *line;
  size_t line_len;
  bool discarding; /* inside an over-long line */
  /* Bytes read from stdin and not yet cut into lines: lines are handled one
   * at a time, and none while output is above the high-water mark, so a
   * burst of small requests that each ask for a large answer cannot grow
   * the queue past one answer above the mark. */
  char in[65536];
  size_t in_len, in_off;
  bool in_eof;
  long long out_progress_ms; /* when stdout last took bytes (or the queue was empty) */
  /* Outbound bytes not yet accepted by stdout (non-blocking): a stalled
   * client never blocks the loop, and stdin is not read while this is above
   * the high-water mark, so it holds at most that plus the answers of calls
   * already admitted. */
  char *out;
  size_t out_len, out_cap;
  bool out_broken; /* stdout closed or failed: answers are dropped */
  warm_slot *warm;
  size_t warm_count, warm_alloc;
  long long *warm_retry_ms; /* per capsule: no new warm cell before (after an idle failure) */
  call_supervisor snapshot_job;
  bool snapshot_running;
} server;

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

/* Scheduler (serve.c): admit a tools/call whose tool exists (BUSY when
 * the queue is full), cancel a request by id, and whether a call with
 * this id is still waiting for its answer. */
void serve_admit_call(server *s, const json_t *id, const char *tool, const json_t *args,
                      const call_origin *origin);
void serve_cancel(server *s, const json_t *request_id);
bool serve_call_in_flight(const server *s, const json_t *id);

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

/* MCP (mcp_dispatch.c): one line from stdin, a verdict as a tools/call
 * result (with resultType when the call came in the 2026-07-28 form), and
 * a progress notification for a call whose client asked for them. */
void mcp_handle_line(server *s, const char *line, size_t len);
json_t *mcp_call_result(json_t *verdict, bool modern);
/* One audit line per tools/call (serve.c): tool, "ok" or the code, the
 * milliseconds since since_ms (0: none), and how it ran or why it did not. */
void serve_log_call(const char *tool, const char *outcome, long long since_ms, const char *how);
void mcp_send_progress(server *s, const json_t *token, int progress, const char *message);

#endif
