/* Runs a trusted helper (the loader's --list, node --version) with an
 * empty environment, no inherited descriptors and bounded time and output. */
#ifndef SUBPROC_H
#define SUBPROC_H

#include <stddef.h>

typedef enum {
  SUBPROC_DONE,             /* *out, *out_len and *exit_status are set */
  SUBPROC_SPAWN_FAILED,     /* no child ran */
  SUBPROC_TIMED_OUT,        /* the child was killed at timeout_ms */
  SUBPROC_OUTPUT_TOO_LARGE, /* the child was killed past max_out bytes */
} subproc_result;

subproc_result subproc_run(char *const argv[], long long timeout_ms, size_t max_out,
                           char **out, size_t *out_len, int *exit_status);

#endif
