/* Ending a cell: the shutdown handshake, the exact join of its whole
 * process tree, and its timings. */
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
#include "cell_orphans.h"
#include "cell_private.h"
#include "clock.h"

cap_code cell_shutdown(cell *c, cap_error *err) {
  long long deadline = mono_ms() + c->lim->shutdown_timeout_ms;
  json_t *msg = json_pack("{s:s}", "type", "shutdown"), *ack = NULL;
  cap_code rc = cell_send(c, msg, deadline, CAP_E_CELL_SHUTDOWN_TIMEOUT, err);
  json_decref(msg);
  if (!rc) rc = cell_expect(c, "shutdown.ack", deadline, CAP_E_CELL_SHUTDOWN_TIMEOUT, &ack, err);
  if (!rc && json_object_size(ack) != 1)
    rc = cap_fail(err, CAP_E_PROTOCOL_VIOLATION, "shutdown.ack carries unexpected fields");
  json_decref(ack);
  if (rc) return rc;
  cell_close_fd(&c->in_fd);
  while (!c->exited || c->out_fd >= 0 || c->err_fd >= 0) {
    pump_result r = cell_pump(c, deadline, err);
    if (r == PUMP_TIMED_OUT)
      return cap_fail(err, CAP_E_CELL_SHUTDOWN_TIMEOUT,
                      "cell did not exit within shutdownTimeoutMs after shutdown.ack");
    if (r == PUMP_FAILED) return err->code;
  }
  if (c->rx.len > 0)
    return cap_fail(err, CAP_E_FRAME_TRAILING_DATA, "cell sent %zu bytes after shutdown.ack", c->rx.len);
  char tail[400];
  cell_stderr_tail(c, tail, sizeof tail);
  if (cell_ceiling_failure(c, tail, err)) return err->code;
  if (!WIFEXITED(c->wait_status) || WEXITSTATUS(c->wait_status) != 0)
    return cap_fail(err, CAP_E_CELL_EXITED, "cell exited with status 0x%x after shutdown",
                    (unsigned)c->wait_status);
  return CAP_OK;
}

static bool wait_readable(int fd, long long ms) {
  long long deadline = mono_ms() + ms;
  for (;;) {
    long long left = deadline - mono_ms();
    struct pollfd p = {fd, POLLIN, 0};
    int r = poll(&p, 1, left > 0 ? (int)left : 0);
    if (r > 0) return true;
    if (r == 0 || (r < 0 && errno != EINTR)) return false;
  }
}

static void signal_pidfd(int pidfd, int sig) {
  syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

cap_code cell_join(cell *c, cap_error *err) {
  if (c->joined) return CAP_OK;
  c->joined = true;
  cap_code rc = CAP_OK;
  cell_close_fd(&c->in_fd);
  long long grace = c->lim ? c->lim->process_grace_ms : 500;
  /* A cell ended while bwrap sets it up: bwrap's sandbox side arms its
   * parent-death signal only late in its setup, so killing bwrap alone can
   * leave the sandbox's init behind. bwrap reports that init (--info-fd)
   * within milliseconds of cloning it: learn it first, so it is killed and
   * awaited by its own pidfd below. */
  for (long long until = mono_ms() + grace; !c->exited && c->init_pidfd < 0 && c->info_fd >= 0;) {
    long long left = until - mono_ms();
    if (left <= 0 || !wait_readable(c->info_fd, left)) break;
    cell_read_small(&c->info_fd, c->info_buf, sizeof c->info_buf, &c->info_len);
    if (c->info_fd < 0 && c->info_len) cell_parse_info(c);
  }
  if (!c->exited && c->pidfd >= 0) {
    signal_pidfd(c->pidfd, SIGTERM);
    if (!wait_readable(c->pidfd, grace)) {
      signal_pidfd(c->pidfd, SIGKILL);
      wait_readable(c->pidfd, grace);
    }
    int status;
    if (waitpid(c->pid, &status, 0) == c->pid) {
      c->exited = true;
      c->wait_status = status;
    }
  }
  /* bwrap may have reported its init just before dying. */
  if (c->info_fd >= 0) {
    cell_read_small(&c->info_fd, c->info_buf, sizeof c->info_buf, &c->info_len);
    if (c->init_pidfd < 0 && c->info_len) cell_parse_info(c);
  }
  /* The PID-namespace init exits only after every process in the namespace
   * has: its pidfd becoming readable is the exact join of the whole tree. */
  if (c->init_pidfd >= 0 && !wait_readable(c->init_pidfd, grace)) {
    signal_pidfd(c->init_pidfd, SIGKILL);
    long long killed_at = mono_ms();
    if (!wait_readable(c->init_pidfd, grace)) {
      /* Keep waiting (bounded) so the host never exits with a cell alive,
       * but report that the grace contract was broken. */
      bool gone = wait_readable(c->init_pidfd, CELL_JOIN_HARD_LIMIT_MS);
      char cause[sizeof err->message] = "";
      if (err && err->code)
        snprintf(cause, sizeof cause, " (after %s: %s)", cap_code_name(err->code), err->message);
      /* A failed join outranks its cause. */
      rc = cap_override(err, CAP_E_CELL_JOIN_FAILED,
                        "cell PID namespace init %d outlived SIGKILL by more than processGraceMs "
                        "%lld ms (%s after %lld ms)%s",
                        (int)c->init_pid, grace, gone ? "exited" : "STILL RUNNING", mono_ms() - killed_at,
                        cause);
    }
  }
  if (c->init_pidfd >= 0) {
    /* An init that outlived its bwrap was reparented to us: reap it. */
    siginfo_t si;
    waitid(P_PIDFD, (id_t)c->init_pidfd, &si, WEXITED | WNOHANG);
  } else if (c->runs_bwrap) {
    /* bwrap ended before it named its init: a sandbox it had cloned is
     * ours now (cell_orphans.c). */
    cell_orphans_end(CELL_JOIN_HARD_LIMIT_MS);
  }
  c->t_joined = mono_ms();
  cell_close_fd(&c->init_pidfd);
  cell_close_fd(&c->pidfd);
  cell_close_fd(&c->out_fd);
  cell_close_fd(&c->err_fd);
  cell_close_fd(&c->status_fd);
  cell_close_fd(&c->info_fd);
  frame_buffer_free(&c->rx);
  free(c->tx);
  free(c->stderr_buf);
  c->tx = NULL;
  c->stderr_buf = NULL;
  return rc;
}

cap_code cell_finish(cell *c, cap_code rc, cap_error *err) {
  if (!rc) rc = cell_shutdown(c, err);
  cap_code joined = cell_join(c, err);
  return joined ? joined : rc;
}

/* Milliseconds between two moments, or null when either was not seen (a
 * cell that never reached that phase, or bwrap not saying when its sandbox
 * was ready). */
static json_t *span(long long from, long long to) {
  return from && to ? json_integer(to - from) : json_null();
}

json_t *cell_timings_json(const cell *c) {
  return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o}", "launcherMs", span(c->t_spawn, c->t_exec), "bwrapSetupMs",
                   span(c->t_exec, c->t_sandbox), "nodeToFirstFrameMs", span(c->t_sandbox, c->t_first_frame),
                   "exchangeMs", span(c->t_first_frame, c->t_exit), "joinMs", span(c->t_exit, c->t_joined),
                   "totalMs", span(c->t_spawn, c->t_joined));
}
