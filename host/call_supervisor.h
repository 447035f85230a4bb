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
#include "host.h"

typedef struct {
  pid_t pid;
  int pidfd;
  int result_fd;
  char *buf;
  size_t len;
  bool overflow; /* more than the verdict limit arrived: the rest is discarded */
  bool exited;
} call_supervisor;

cap_code supervisor_start(host *h, const char *tool, const json_t *input, call_supervisor *s,
                          cap_error *err);
/* The largest verdict a supervisor writes: a result re-encoded by the host
 * may not exceed 2 x maxFrameBytes (the supervisor checks), plus room for
 * the envelope and an error verdict. */
size_t supervisor_verdict_max(const host_limits *lim);
/* The re-encoded result a supervisor may report: 2 x maxFrameBytes. */
size_t supervisor_result_limit(const host_limits *lim);
/* Reads what is available; returns false once the pipe reached EOF. Past
 * max it keeps draining but stores nothing more (no spliced verdict). */
bool supervisor_read(call_supervisor *s, size_t max);
/* After exit: {"ok":true,"result":{...}} or {"ok":false,"error":{...}}. */
json_t *supervisor_verdict(call_supervisor *s);
void supervisor_cancel(call_supervisor *s);
/* Reaps and frees; blocks only until the (already exited) child is reaped. */
void supervisor_finish(call_supervisor *s);

#endif
