/* One tool call, supervised in a forked copy of the host: it runs the call
 * synchronously (deadlines, shutdown handshake, exact join) and reports a
 * JSON verdict on a pipe. The serve loop only watches the pipe and the
 * supervisor's pidfd, so no call can block the protocol or another call.
 * SIGTERM cancels: the supervisor joins its cell and reports CALL_CANCELLED. */
#ifndef CALL_SUPERVISOR_H
#define CALL_SUPERVISOR_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

#include "cap_error.h"

/* Pointers only: declared, not included (C11 allows the repeat). */
typedef struct host host;
typedef struct host_limits host_limits;

typedef struct call_supervisor {
  pid_t pid;
  int pidfd;
  int result_fd;
  int assign_fd; /* a warm cell's assignment pipe (parent's end); -1 otherwise */
  char *buf;
  size_t len;
  bool overflow; /* more than the verdict limit arrived: the rest is discarded */
  bool exited;
} call_supervisor;

cap_code supervisor_start(host *h, const char *tool, const json_t *input, call_supervisor *s, cap_error *err);
/* A warm cell of capsule cap_index (warm_cell.c): started now, given its one
 * call later by supervisor_assign; its verdict is that call's. */
cap_code supervisor_start_warm(host *h, size_t cap_index, call_supervisor *s, cap_error *err);
/* The startup snapshot job (snapshot.c); its verdict goes to snapshot_adopt. */
cap_code supervisor_start_snapshot(host *h, call_supervisor *s, cap_error *err);
/* Writes the call and closes the pipe; false (nothing written) when the
 * call does not fit the pipe in one non-blocking write: run it cold. */
bool supervisor_assign(call_supervisor *s, const char *tool, const json_t *input);
/* Closes the assignment pipe of a warm cell that got no call: it shuts its
 * cell down and exits with {"ok":false,"recycled":true}. */
void supervisor_recycle(call_supervisor *s);
/* The largest verdict a supervisor writes: a result re-encoded by the host
 * may not exceed 2 x maxFrameBytes (the supervisor checks), plus room for
 * the envelope and an error verdict. */
size_t supervisor_verdict_max(const host_limits *lim);
/* The re-encoded result a supervisor may report: 2 x maxFrameBytes. */
size_t supervisor_result_limit(const host_limits *lim);
/* Reads what is available; returns false once the pipe reached EOF. Past
 * max it keeps draining but stores nothing more (no spliced verdict). */
bool supervisor_read(call_supervisor *s, size_t max);
/* Once its pidfd says it exited: reads the rest of the pipe (which drains at
 * once, bounded by 100 ms per read) and marks it exited. */
void supervisor_drain(call_supervisor *s, size_t max);
/* After exit: the verdict it wrote (verdict.h), or an INTERNAL error
 * verdict when it wrote none (or more than the limit). */
json_t *supervisor_verdict(call_supervisor *s);
void supervisor_cancel(call_supervisor *s);
/* Reaps and frees; blocks only until the (already exited) child is reaped. */
void supervisor_finish(call_supervisor *s);

#endif
