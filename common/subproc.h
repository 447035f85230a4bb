/* Runs a short trusted helper (node --version, the loader's --list, bwrap
 * preflights) through spawn_program, with bounded time and output. */
#ifndef SUBPROC_H
#define SUBPROC_H

#include <signal.h>
#include <stddef.h>

#include "cap_error.h"

typedef enum {
  SUBPROC_DONE,             /* *out, *out_len and *exit_status are set */
  SUBPROC_SPAWN_FAILED,     /* no child ran (or it could not be exec'd) */
  SUBPROC_TIMED_OUT,        /* the child was killed at timeout_ms */
  SUBPROC_OUTPUT_TOO_LARGE, /* the child was killed past max_out bytes */
  SUBPROC_CANCELLED,        /* the child was killed when *cancel was set */
} subproc_result;

typedef struct {
  int capture_fd; /* which of the child's descriptors is captured: 1 or 2 */
  int fd3;        /* a descriptor handed to the child as fd 3, or -1 */
  /* A flag a signal handler sets to end the job (a supervisor's SIGTERM
   * on the host's death), or NULL: the child is killed then, not waited
   * for to its end. */
  const volatile sig_atomic_t *cancel;
} subproc_options;

#define SUBPROC_STDOUT ((subproc_options){.capture_fd = 1, .fd3 = -1})

/* Anything but SUBPROC_DONE also says why in *why (when not NULL): the
 * spawn's own error (LAUNCH_FAILED: what could not be executed, and
 * errno's words), the timeout or output bound that was hit, or the
 * cancellation (CALL_CANCELLED). */
subproc_result subproc_run(char *const argv[], subproc_options opt, long long timeout_ms, size_t max_out,
                           char **out, size_t *out_len, int *exit_status, cap_error *why);

#endif
