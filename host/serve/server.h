/* One MCP server's state and its two seams, for the serve files and the
 * fuzz_mcp harness: how calls are run (call_runner: forked supervisors in
 * serve, a stand-in in the fuzzer) and what the protocol says when the
 * scheduler decides about a call (call_events, filled by mcp.c).
 * The scheduler (scheduler.c) knows calls, not JSON-RPC; the protocol
 * (mcp.c) knows JSON-RPC, not supervisors. */
#ifndef SERVER_H
#define SERVER_H

#include <jansson.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

#include "call/supervisor.h"
#include "call/verdict.h"

/* Pointers only: declared, not included (C11 allows the repeat). */
typedef struct host host;

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
  size_t cap_index; /* the capsule that publishes tool: looked up once, when the call is admitted */
  json_t *input;
  json_t *progress_token; /* NULL: no progress notifications */
  long long arrived_ms, started_ms;
  bool running, cancelled, modern;
  bool warm; /* runs in a warm cell */
  call_supervisor sup;
} call_slot;

/* How the scheduler starts and cancels a call: the forked call supervisor
 * (supervisor.c) in serve_run; a stand-in in fuzz/harness/fuzz_mcp.c,
 * so the protocol and the scheduler run there without forking. */
typedef struct {
  cap_code (*start)(host *h, const char *tool, const json_t *input, call_supervisor *sup, cap_error *err);
  void (*cancel)(call_supervisor *sup);
  /* Warm cells (warm_pool.c); NULL: none are kept. */
  cap_code (*start_warm)(host *h, size_t cap_index, call_supervisor *sup, cap_error *err);
  /* The startup snapshot job; NULL: cells run without a snapshot. */
  cap_code (*start_snapshot)(host *h, call_supervisor *sup, cap_error *err);
} call_runner;

struct server;
/* What the scheduler reports about a call, to the protocol that admitted
 * it (mcp.c's mcp_events): refused (BUSY, QUEUE_TIMEOUT,
 * CALL_CANCELLED at shutdown, a start failure: err says which), started
 * (its cell is starting), finished (its supervisor's verdict, read once by
 * the scheduler; never for a call the client cancelled). */
typedef struct {
  void (*refused)(struct server *s, const json_t *id, const cap_error *why);
  void (*started)(struct server *s, const call_slot *c);
  void (*finished)(struct server *s, const call_slot *c, const verdict_reading *verdict);
} call_events;

/* A warm cell waiting for its call, as the serve loop sees it. */
typedef struct {
  call_supervisor sup;
  size_t cap_index;
  long long started_ms;
  bool retiring; /* recycled (idle age, shutdown): waiting for it to exit */
} warm_slot;

typedef struct server {
  host *h;
  const call_runner *runner;
  const call_events *events;
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

#endif
