/* Why a cell ended: a resource ceiling (CELL_RESOURCE_LIMIT) or not, and
 * the printable tail of what it said on stderr. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "admit/config.h"
#include "cell.h"
#include "cell_private.h"
#include "clock.h"

/* The signal that ended the cell's program: bwrap exits 128+N when its
 * child died by signal N (a guest could fake this with exit(128+N), and so
 * only misname its own failure). */
static int cell_death_signal(const cell *c) {
  if (!c->exited) return 0;
  if (WIFSIGNALED(c->wait_status)) return WTERMSIG(c->wait_status);
  if (WIFEXITED(c->wait_status) && WEXITSTATUS(c->wait_status) > 128)
    return WEXITSTATUS(c->wait_status) - 128;
  return 0;
}

/* A cell that hit one of its ceilings fails with CELL_RESOURCE_LIMIT naming
 * it; returns CAP_OK when the exit was not a ceiling. */
cap_code cell_ceiling_failure(const cell *c, const char *tail, cap_error *err) {
  const host_limits *l = c->lim;
  int sig = cell_death_signal(c);
  bool oom = c->stderr_buf && strstr(c->stderr_buf, "out of memory");
  if ((sig == SIGABRT || sig == SIGTRAP || sig == SIGSEGV) && oom)
    return cap_fail(err, CAP_E_CELL_RESOURCE_LIMIT,
                    "memory: the cell ran out of memory (maxCellMemoryMb %lld, "
                    "maxOldSpaceSizeMb %lld); stderr: %s",
                    l->max_cell_memory_mb, l->max_old_space_size_mb, tail);
  if (sig == SIGXCPU || sig == SIGKILL)
    return cap_fail(err, CAP_E_CELL_RESOURCE_LIMIT,
                    "cpu: the cell used its CPU time (maxCellCpuSeconds %lld; %s)", l->max_cell_cpu_seconds,
                    sig == SIGXCPU ? "SIGXCPU" : "SIGKILL at the hard limit or by the kernel");
  if (sig == SIGXFSZ)
    return cap_fail(err, CAP_E_CELL_RESOURCE_LIMIT, "file size: the cell wrote past maxCellFileBytes %lld",
                    l->max_cell_file_bytes);
  return CAP_OK;
}

void cell_stderr_tail(const cell *c, char *out, size_t cap) {
  size_t n = c->stderr_len, take = n < cap - 1 ? n : cap - 1;
  const char *src = c->stderr_buf ? c->stderr_buf + (n - take) : "";
  for (size_t i = 0; i < take; i++) {
    unsigned char ch = (unsigned char)src[i];
    out[i] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : (ch == '\n' ? '|' : '?');
  }
  out[take] = '\0';
}
