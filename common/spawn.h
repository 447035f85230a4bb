/* The one way the host's programs start another program (cells, the world
 * probe, and through subproc_run every short helper: bwrap preflights,
 * node --version, the loader's --list): fork, exact descriptor table,
 * default signals, own process group, parent-death signal, empty
 * environment, exec by path, exec failure reported, pidfd for the child. */
#ifndef SPAWN_H
#define SPAWN_H

#include <sys/types.h>

#include "cap_error.h"

#define SPAWN_MAX_FDS 8

/* child_fds[i] becomes descriptor i in the child (-1: /dev/null); argv
 * NULL runs exe with argv {basename(exe)}. */
cap_code spawn_program(const char *exe, char *const argv[], const int *child_fds, int nfds, pid_t *pid,
                       int *pidfd, cap_error *err);

#endif
