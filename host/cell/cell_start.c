/* Starting a cell: pipes, the launcher's descriptor table, the sealed
 * launch document, spawn. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "admit/config.h"
#include "cell.h"
#include "cell_orphans.h"
#include "cell_private.h"
#include "clock.h"
#include "launch_contract.h"
#include "safe_open.h"
#include "spawn.h"

void cell_guest_bounds(cell *c) {
  const host_limits *lim = c->lim;
  c->frame_max = (size_t)lim->max_frame_bytes;
  /* Whole frames may nest a few levels above a descriptor or value. */
  c->frame_limits.max_depth = (size_t)lim->max_json_depth + 4;
  /* The most nodes a legitimate frame holds: a describe.result of
   * maxContributions tools, each schema within maxJsonNodes, plus their
   * envelopes. The parse budget follows from it (strict_json.h); a call
   * narrows it to one output (call.c). */
  c->frame_limits.max_nodes = (size_t)lim->max_contributions * ((size_t)lim->max_json_nodes + 16) + 64;
}

/* A report names at most RUNTIME_MAX_OBJECTS shared objects, a few nodes
 * each, beside a few dozen fields. */
#define CELL_REPORT_DEPTH 16
#define CELL_REPORT_NODES 4096

void cell_report_bounds(cell *c) {
  if (c->frame_max < CELL_REPORT_FRAME_BYTES) c->frame_max = CELL_REPORT_FRAME_BYTES;
  if (c->frame_limits.max_depth < CELL_REPORT_DEPTH) c->frame_limits.max_depth = CELL_REPORT_DEPTH;
  if (c->frame_limits.max_nodes < CELL_REPORT_NODES) c->frame_limits.max_nodes = CELL_REPORT_NODES;
}

static void cell_init(cell *c, const host_limits *lim) {
  memset(c, 0, sizeof *c);
  c->lim = lim;
  cell_guest_bounds(c);
  c->pidfd = c->in_fd = c->out_fd = c->err_fd = c->status_fd = c->info_fd = -1;
  c->init_pidfd = -1;
}

static cap_code make_pipe(int p[2], cap_error *err) {
  if (pipe2(p, O_CLOEXEC) != 0) return cap_fail(err, CAP_E_LAUNCH_FAILED, "pipe: %s", strerror(errno));
  return CAP_OK;
}

static void set_nonblock(int fd) {
  if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static cap_code start(cell *c, const char *exe, int doc_fd, bool launcher, cap_error *err) {
  c->t_spawn = mono_ms();
  int in[2] = {-1, -1}, out[2] = {-1, -1}, er[2] = {-1, -1}, st[2] = {-1, -1}, info[2] = {-1, -1};
  cap_code rc = make_pipe(in, err);
  if (!rc) rc = make_pipe(out, err);
  if (!rc) rc = make_pipe(er, err);
  if (!rc && launcher) rc = make_pipe(st, err);
  if (!rc && launcher) rc = make_pipe(info, err);
  if (!rc && launcher) {
    cell_orphans_adopt();
    c->runs_bwrap = true;
  }
  if (!rc) {
    /* The launcher's descriptor table (launch_contract.h); the world probe
     * gets only the first three. */
    int fds[LAUNCHER_FD_COUNT] = {
        [LAUNCHER_STDIN_FD] = in[0], [LAUNCHER_STDOUT_FD] = out[1], [LAUNCHER_STDERR_FD] = er[1],
        [LAUNCHER_DOC_FD] = doc_fd,  [LAUNCHER_STATUS_FD] = st[1],  [LAUNCHER_INFO_FD] = info[1]};
    rc = spawn_program(exe, NULL, fds, launcher ? LAUNCHER_FD_COUNT : LAUNCHER_DOC_FD, &c->pid, &c->pidfd,
                       err);
  }
  cell_close_fd(&in[0]);
  cell_close_fd(&out[1]);
  cell_close_fd(&er[1]);
  cell_close_fd(&st[1]);
  cell_close_fd(&info[1]);
  c->in_fd = in[1];
  c->out_fd = out[0];
  c->err_fd = er[0];
  c->status_fd = st[0];
  c->info_fd = info[0];
  set_nonblock(c->in_fd);
  set_nonblock(c->out_fd);
  set_nonblock(c->err_fd);
  set_nonblock(c->status_fd);
  set_nonblock(c->info_fd);
  if (rc) {
    c->exited = true; /* spawn reaped it already, or it never existed */
    cell_join(c, NULL);
  }
  return rc;
}

cap_code cell_start_launcher(cell *c, const char *launcher, const char *doc, const host_limits *lim,
                             cap_error *err) {
  cell_init(c, lim);
  /* A sealed memfd: the document cannot change after the host wrote it. */
  int mfd = (int)syscall(SYS_memfd_create, "launch-document", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (mfd < 0) return cap_fail(err, CAP_E_LAUNCH_FAILED, "memfd_create: %s", strerror(errno));
  if (!so_write_all(mfd, doc, strlen(doc)) || lseek(mfd, 0, SEEK_SET) != 0 ||
      fcntl(mfd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) != 0) {
    close(mfd);
    return cap_fail(err, CAP_E_LAUNCH_FAILED, "cannot write launch document");
  }
  cap_code rc = start(c, launcher, mfd, true, err);
  close(mfd);
  return rc;
}

cap_code cell_start_probe(cell *c, const char *probe, const host_limits *lim, cap_error *err) {
  cell_init(c, lim);
  return start(c, probe, -1, false, err);
}
