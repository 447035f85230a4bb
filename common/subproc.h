/* Runs a trusted helper (the loader's --list, node --version) with an
 * empty environment, no inherited descriptors and bounded time and output. */
#ifndef SUBPROC_H
#define SUBPROC_H

#include <stddef.h>

/* Returns 0 and the exit status on completion, -1 on spawn failure, -2 on
 * timeout (child killed), -3 when stdout exceeds max_out. */
int subproc_run(char *const argv[], long long timeout_ms, size_t max_out,
                char **out, size_t *out_len, int *exit_status);

/* Monotonic clock in milliseconds. */
long long mono_ms(void);

#endif
