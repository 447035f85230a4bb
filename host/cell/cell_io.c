/* Talking to a running cell: one poll loop over its pipes and pidfd,
 * frames in and out under deadlines, bounded stderr, and the moments the
 * launcher's refusal and bwrap's report arrive (cell_reports.c reads them). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "admit/config.h"
#include "cancellable_poll.h"
#include "cell.h"
#include "cell_private.h"
#include "cell_reports.h"
#include "clock.h"
#include "strict_json.h"

volatile sig_atomic_t cell_cancel_requested;

void cell_close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

void cell_parse_info(cell *c) {
  pid_t pid = cell_reports_child_pid(c->info_buf, c->info_len);
  if (pid) {
    c->init_pid = pid;
    c->t_sandbox = mono_ms();
    c->init_pidfd = (int)syscall(SYS_pidfd_open, c->init_pid, 0);
    if (c->init_pidfd >= 0) fcntl(c->init_pidfd, F_SETFD, FD_CLOEXEC);
  }
}

void cell_reap(cell *c) {
  if (c->exited) return;
  int status;
  pid_t r = waitpid(c->pid, &status, WNOHANG);
  if (r == c->pid) {
    c->exited = true;
    c->wait_status = status;
    c->t_exit = mono_ms();
  }
}

/* Reads what is available from fd into a small fixed buffer; closes at EOF. */
void cell_read_small(int *fd, char *buf, size_t cap, size_t *len) {
  for (;;) {
    char tmp[512];
    ssize_t n = read(*fd, tmp, sizeof tmp);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return; /* EAGAIN */
    if (n == 0) {
      cell_close_fd(fd);
      return;
    }
    size_t room = cap - 1 - *len;
    size_t take = (size_t)n < room ? (size_t)n : room;
    memcpy(buf + *len, tmp, take);
    *len += take;
    buf[*len] = '\0';
  }
}

/* Reads what fd holds now into buf: the count, or 0 when it holds
 * nothing more now (and at end of file, fd is closed). */
static size_t read_now(int *fd, void *buf, size_t size) {
  for (;;) {
    ssize_t n = read(*fd, buf, size);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) cell_close_fd(fd);
    return n > 0 ? (size_t)n : 0;
  }
}

static cap_code drain_stdout(cell *c, cap_error *err) {
  unsigned char buf[65536];
  for (size_t n; (n = read_now(&c->out_fd, buf, sizeof buf)) > 0;)
    if (frame_buffer_append(&c->rx, buf, n, c->frame_max, err)) return err->code;
  return CAP_OK;
}

static cap_code drain_stderr(cell *c, cap_error *err) {
  char buf[16384];
  size_t max = (size_t)c->lim->max_stderr_bytes;
  for (size_t n; (n = read_now(&c->err_fd, buf, sizeof buf)) > 0;) {
    if (c->stderr_len + n > max)
      return cap_fail(err, CAP_E_CELL_STDERR_LIMIT, "cell wrote more than maxStderrBytes (%zu) to stderr",
                      max);
    char *p = realloc(c->stderr_buf, c->stderr_len + n + 1);
    if (!p) return cap_fail(err, CAP_E_INTERNAL, "out of memory");
    c->stderr_buf = p;
    memcpy(p + c->stderr_len, buf, n);
    c->stderr_len += n;
    p[c->stderr_len] = '\0';
  }
  return CAP_OK;
}

/* Writes what the cell's stdin accepts now. A cell that stopped reading
 * (EPIPE) is not an error here: its exit explains why. */
static void flush_stdin(cell *c) {
  while (c->tx_off < c->tx_len) {
    ssize_t n = write(c->in_fd, c->tx + c->tx_off, c->tx_len - c->tx_off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n < 0) {
      c->tx_off = c->tx_len;
      return;
    }
    c->tx_off += (size_t)n;
  }
}

static pump_result cancelled(cap_error *err) {
  cap_fail(err, CAP_E_CALL_CANCELLED, "the call was cancelled by the client or shutdown");
  return PUMP_FAILED;
}

/* One poll round over every open descriptor: PUMP_TIMED_OUT when the
 * deadline passed with nothing to do. */
pump_result cell_pump(cell *c, long long deadline, cap_error *err) {
  struct pollfd p[6];
  int n = 0, i_out = -1, i_err = -1, i_st = -1, i_info = -1, i_pid = -1, i_in = -1;
  if (c->out_fd >= 0) i_out = n, p[n++] = (struct pollfd){c->out_fd, POLLIN, 0};
  if (c->err_fd >= 0) i_err = n, p[n++] = (struct pollfd){c->err_fd, POLLIN, 0};
  if (c->status_fd >= 0) i_st = n, p[n++] = (struct pollfd){c->status_fd, POLLIN, 0};
  if (c->info_fd >= 0) i_info = n, p[n++] = (struct pollfd){c->info_fd, POLLIN, 0};
  if (!c->exited) i_pid = n, p[n++] = (struct pollfd){c->pidfd, POLLIN, 0};
  if (c->in_fd >= 0 && c->tx_off < c->tx_len) i_in = n, p[n++] = (struct pollfd){c->in_fd, POLLOUT, 0};
  if (cell_cancel_requested) return cancelled(err);
  if (n == 0) return PUMP_TIMED_OUT;
  long long left = deadline - mono_ms();
  if (left <= 0) return PUMP_TIMED_OUT;
  /* A cancellation that lands after the check above still ends the wait. */
  int r = cancellable_poll(p, (nfds_t)n, left, &cell_cancel_requested);
  if (r < 0 && errno == ECANCELED) return cancelled(err);
  if (r < 0 && errno == EINTR) return PUMP_PROGRESS;
  if (r < 0) {
    cap_fail(err, CAP_E_INTERNAL, "poll: %s", strerror(errno));
    return PUMP_FAILED;
  }
  if (r == 0) return mono_ms() >= deadline ? PUMP_TIMED_OUT : PUMP_PROGRESS;
  if (i_out >= 0 && p[i_out].revents && drain_stdout(c, err)) return PUMP_FAILED;
  if (i_err >= 0 && p[i_err].revents && drain_stderr(c, err)) return PUMP_FAILED;
  if (i_st >= 0 && p[i_st].revents) {
    cell_read_small(&c->status_fd, c->status_buf, sizeof c->status_buf, &c->status_len);
    if (c->status_fd < 0 && !c->status_len) c->t_exec = mono_ms();
  }
  if (i_info >= 0 && p[i_info].revents) {
    cell_read_small(&c->info_fd, c->info_buf, sizeof c->info_buf, &c->info_len);
    if (c->info_fd < 0) cell_parse_info(c);
  }
  if (i_pid >= 0 && p[i_pid].revents) cell_reap(c);
  if (i_in >= 0 && p[i_in].revents) flush_stdin(c);
  return PUMP_PROGRESS;
}

/* bwrap resolves each --ro-bind-fd back to a path by name before it
 * mounts, then compares inodes: a granted file unlinked or swapped in that
 * window ends the cell with one of these, before any guest code ran. It is
 * the same race the launcher's own checks refuse: LAUNCH_SOURCE_MISMATCH. */
static bool lost_a_source(const cell *c, const char *tail, cap_error *err) {
  static const char *const said[] = {"bwrap: Can't find source path /proc/self/fd/",
                                     "bwrap: Race condition binding dirfd", NULL};
  if (!c->exited || !WIFEXITED(c->wait_status) || WEXITSTATUS(c->wait_status) != 1) return false;
  for (const char *const *s = said; *s; s++)
    if (strncmp(tail, *s, strlen(*s)) == 0) {
      cap_fail(err, CAP_E_LAUNCH_SOURCE_MISMATCH,
               "a source changed between the launcher's check and bwrap's mount; bwrap said: %s", tail);
      return true;
    }
  return false;
}

static cap_code exited_early(cell *c, cap_error *err) {
  /* Give the process a moment to be reaped so the status is meaningful. */
  long long until = mono_ms() + 200;
  while (!c->exited && mono_ms() < until) {
    struct pollfd p = {c->pidfd, POLLIN, 0};
    poll(&p, 1, 20);
    cell_reap(c);
  }
  char tail[400];
  cell_stderr_tail(c, tail, sizeof tail);
  if (cell_ceiling_failure(c, tail, err)) return err->code;
  if (lost_a_source(c, tail, err)) return err->code;
  if (c->exited && WIFSIGNALED(c->wait_status))
    return cap_fail(err, CAP_E_CELL_EXITED, "cell ended by signal %d before answering; stderr: %s",
                    WTERMSIG(c->wait_status), tail);
  return cap_fail(err, CAP_E_CELL_EXITED, "cell exited (status %d) before answering; stderr: %s",
                  c->exited && WIFEXITED(c->wait_status) ? WEXITSTATUS(c->wait_status) : -1, tail);
}

cap_code cell_send(cell *c, const json_t *msg, long long deadline, cap_code timeout_code, cap_error *err) {
  unsigned char *buf;
  size_t len;
  if (frame_encode(msg, c->frame_max, &buf, &len, err)) return err->code;
  free(c->tx);
  c->tx = buf;
  c->tx_len = len;
  c->tx_off = 0;
  flush_stdin(c);
  while (c->tx_off < c->tx_len) {
    if (c->status_fd < 0 && c->status_len) /* the launcher refused to exec bwrap */
      return cell_reports_launcher_status(c->status_buf, c->status_len, err);
    pump_result r = cell_pump(c, deadline, err);
    if (r == PUMP_TIMED_OUT)
      return cap_fail(err, timeout_code, "cell did not read its input before the deadline");
    if (r == PUMP_FAILED) return err->code;
  }
  return CAP_OK;
}

cap_code cell_recv(cell *c, long long deadline, cap_code timeout_code, json_t **out, cap_error *err) {
  *out = NULL;
  for (;;) {
    frame_status fs = frame_next(&c->rx, c->frame_max, &c->frame_limits, out, err);
    if (fs == FRAME_READY) {
      if (!c->t_first_frame) c->t_first_frame = mono_ms();
      return CAP_OK;
    }
    if (fs == FRAME_ERROR) return err->code;
    if (c->status_fd < 0 && c->status_len) /* the launcher refused to exec bwrap */
      return cell_reports_launcher_status(c->status_buf, c->status_len, err);
    if (c->out_fd < 0 && c->status_fd < 0) {
      if (c->rx.len > 0)
        return cap_fail(err, CAP_E_FRAME_TRUNCATED,
                        "cell closed its output in the middle of a frame (%zu bytes pending)", c->rx.len);
      return exited_early(c, err);
    }
    pump_result r = cell_pump(c, deadline, err);
    if (r == PUMP_TIMED_OUT) {
      const char *which = timeout_code == CAP_E_CELL_CALL_TIMEOUT       ? "callTimeoutMs"
                          : timeout_code == CAP_E_CELL_SHUTDOWN_TIMEOUT ? "shutdownTimeoutMs"
                                                                        : "startupTimeoutMs";
      return cap_fail(err, timeout_code, "cell did not answer within %s", which);
    }
    if (r == PUMP_FAILED) return err->code;
  }
}

cap_code cell_expect(cell *c, const char *type, long long deadline, cap_code timeout_code, json_t **out,
                     cap_error *err) {
  json_t *msg = NULL;
  if (cell_recv(c, deadline, timeout_code, &msg, err)) return err->code;
  const char *got = json_string_value(json_object_get(msg, "type"));
  if (!got || strcmp(got, type) != 0) {
    cap_fail(err, CAP_E_PROTOCOL_VIOLATION, "expected a \"%s\" message, got \"%s\"", type,
             got ? got : "(no type)");
    json_decref(msg);
    if (out) *out = NULL;
    return err->code;
  }
  if (out)
    *out = msg;
  else
    json_decref(msg);
  return CAP_OK;
}

bool cell_has_init(const cell *c) {
  return c->init_pid > 0;
}

cell_init_wait cell_wait_init(cell *c, long long deadline, cap_error *err) {
  while (!cell_has_init(c)) {
    if (c->info_fd < 0) return CELL_INIT_NOT_REPORTED;
    pump_result r = cell_pump(c, deadline, err);
    if (r == PUMP_TIMED_OUT) return CELL_INIT_TIMED_OUT;
    if (r == PUMP_FAILED) return CELL_INIT_FAILED;
  }
  return CELL_INIT_KNOWN;
}
