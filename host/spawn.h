/* The one process path shared by the attestation probe and every cell:
 * fork, exact descriptor table, default signals, own process group, parent
 * death signal, empty environment, exec by path, pidfd for the child. */
#ifndef SPAWN_H
#define SPAWN_H

#include <sys/types.h>

#include "cap_error.h"

#define SPAWN_MAX_FDS 8

/* child_fds[i] becomes descriptor i in the child (-1: /dev/null). */
cap_code spawn_program(const char *exe, const int *child_fds, int nfds, pid_t *pid,
                       int *pidfd, cap_error *err);

#endif
