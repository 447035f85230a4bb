#include "cell.h"

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

#include "launch_contract.h"
#include "safe_open.h"
#include "spawn.h"
#include "clock.h"

/* What one poll round did; PUMP_FAILED leaves the code in err. */
typedef enum { PUMP_PROGRESS, PUMP_TIMED_OUT, PUMP_FAILED } pump_result;

volatile sig_atomic_t cell_cancel_requested;
#define CELL_JOIN_HARD_LIMIT_MS 10000

static void cell_init(cell *c, const host_limits *lim) {
  memset(c, 0, sizeof *c);
  c->lim = lim;
  /* Whole frames may nest a few levels above a descriptor or value. */
  c->frame_limits.max_depth = (size_t)lim->max_json_depth + 4;
  c->frame_limits.max_nodes = (size_t)lim->max_frame_bytes;
  c->pidfd = c->in_fd = c->out_fd = c->err_fd = c->status_fd = c->info_fd = -1;
  c->init_pidfd = -1;
}

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

static cap_code make_pipe(int p[2], cap_error *err) {
  if (pipe2(p, O_CLOEXEC) != 0)
    return cap_fail(err, CAP_E_LAUNCH_FAILED, "pipe: %s", strerror(errno));
  return CAP_OK;
}

static void set_nonblock(int fd) {
  if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static cap_code start(cell *c, const char *exe, int doc_fd, bool launcher, cap_error *err) {
  c->t_spawn = mono_ms();
  int in[2] = {-1, -1}, out[2] = {-1, -1}, er[2] = {-1, -1}, st[2] = {-1, -1},
      info[2] = {-1, -1};
  cap_code rc = make_pipe(in, err);
  if (!rc) rc = make_pipe(out, err);
  if (!rc) rc = make_pipe(er, err);
  if (!rc && launcher) rc = make_pipe(st, err);
  if (!rc && launcher) rc = make_pipe(info, err);
  if (!rc) {
    /* The launcher's descriptor table (launch_contract.h); the world probe
     * gets only the first three. */
    int fds[LAUNCHER_FD_COUNT] = {[LAUNCHER_STDIN_FD] = in[0], [LAUNCHER_STDOUT_FD] = out[1],
                                  [LAUNCHER_STDERR_FD] = er[1], [LAUNCHER_DOC_FD] = doc_fd,
                                  [LAUNCHER_STATUS_FD] = st[1], [LAUNCHER_INFO_FD] = info[1]};
    rc = spawn_program(exe, NULL, fds, launcher ? LAUNCHER_FD_COUNT : LAUNCHER_DOC_FD, &c->pid,
                       &c->pidfd, err);
  }
  close_fd(&in[0]);
  close_fd(&out[1]);
  close_fd(&er[1]);
  close_fd(&st[1]);
  close_fd(&info[1]);
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

cap_code cell_start_launcher(cell *c, const char *launcher, const char *doc,
                             const host_limits *lim, cap_error *err) {
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

static void parse_info(cell *c) {
  json_t *v = json_loadb(c->info_buf, c->info_len, 0, NULL);
  json_t *pid = json_object_get(v, "child-pid");
  if (json_is_integer(pid) && json_integer_value(pid) > 1) {
    c->init_pid = (pid_t)json_integer_value(pid);
    c->t_sandbox = mono_ms();
    c->init_pidfd = (int)syscall(SYS_pidfd_open, c->init_pid, 0);
    if (c->init_pidfd >= 0) fcntl(c->init_pidfd, F_SETFD, FD_CLOEXEC);
  }
  json_decref(v);
}

static void reap(cell *c) {
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
static void read_small(int *fd, char *buf, size_t cap, size_t *len) {
  for (;;) {
    char tmp[512];
    ssize_t n = read(*fd, tmp, sizeof tmp);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return; /* EAGAIN */
    if (n == 0) {
      close_fd(fd);
      return;
    }
    size_t room = cap - 1 - *len;
    size_t take = (size_t)n < room ? (size_t)n : room;
    memcpy(buf + *len, tmp, take);
    *len += take;
    buf[*len] = '\0';
  }
}

static cap_code drain_stdout(cell *c, cap_error *err) {
  unsigned char buf[65536];
  for (;;) {
    ssize_t n = read(c->out_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return CAP_OK;
    if (n == 0) {
      close_fd(&c->out_fd);
      return CAP_OK;
    }
    if (frame_buffer_append(&c->rx, buf, (size_t)n, (size_t)c->lim->max_frame_bytes, err))
      return err->code;
  }
}

static cap_code drain_stderr(cell *c, cap_error *err) {
  char buf[16384];
  for (;;) {
    ssize_t n = read(c->err_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return CAP_OK;
    if (n == 0) {
      close_fd(&c->err_fd);
      return CAP_OK;
    }
    size_t max = (size_t)c->lim->max_stderr_bytes;
    if (c->stderr_len + (size_t)n > max)
      return cap_fail(err, CAP_E_CELL_STDERR_LIMIT,
                      "cell wrote more than maxStderrBytes (%zu) to stderr", max);
    char *p = realloc(c->stderr_buf, c->stderr_len + (size_t)n + 1);
    if (!p) return cap_fail(err, CAP_E_INTERNAL, "out of memory");
    c->stderr_buf = p;
    memcpy(p + c->stderr_len, buf, (size_t)n);
    c->stderr_len += (size_t)n;
    p[c->stderr_len] = '\0';
  }
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

/* One poll round over every open descriptor: PUMP_TIMED_OUT when the
 * deadline passed with nothing to do. */
static pump_result pump(cell *c, long long deadline, cap_error *err) {
  struct pollfd p[6];
  int n = 0, i_out = -1, i_err = -1, i_st = -1, i_info = -1, i_pid = -1, i_in = -1;
  if (c->out_fd >= 0) i_out = n, p[n++] = (struct pollfd){c->out_fd, POLLIN, 0};
  if (c->err_fd >= 0) i_err = n, p[n++] = (struct pollfd){c->err_fd, POLLIN, 0};
  if (c->status_fd >= 0) i_st = n, p[n++] = (struct pollfd){c->status_fd, POLLIN, 0};
  if (c->info_fd >= 0) i_info = n, p[n++] = (struct pollfd){c->info_fd, POLLIN, 0};
  if (!c->exited) i_pid = n, p[n++] = (struct pollfd){c->pidfd, POLLIN, 0};
  if (c->in_fd >= 0 && c->tx_off < c->tx_len)
    i_in = n, p[n++] = (struct pollfd){c->in_fd, POLLOUT, 0};
  if (cell_cancel_requested) {
    cap_fail(err, CAP_E_CALL_CANCELLED, "the call was cancelled by the client or shutdown");
    return PUMP_FAILED;
  }
  if (n == 0) return PUMP_TIMED_OUT;
  long long left = deadline - mono_ms();
  if (left <= 0) return PUMP_TIMED_OUT;
  int r = poll(p, (nfds_t)n, left > 1000000 ? 1000000 : (int)left);
  if (r < 0 && errno == EINTR) return PUMP_PROGRESS;
  if (r < 0) {
    cap_fail(err, CAP_E_INTERNAL, "poll: %s", strerror(errno));
    return PUMP_FAILED;
  }
  if (r == 0) return mono_ms() >= deadline ? PUMP_TIMED_OUT : PUMP_PROGRESS;
  if (i_out >= 0 && p[i_out].revents && drain_stdout(c, err)) return PUMP_FAILED;
  if (i_err >= 0 && p[i_err].revents && drain_stderr(c, err)) return PUMP_FAILED;
  if (i_st >= 0 && p[i_st].revents) {
    read_small(&c->status_fd, c->status_buf, sizeof c->status_buf, &c->status_len);
    if (c->status_fd < 0 && !c->status_len) c->t_exec = mono_ms();
  }
  if (i_info >= 0 && p[i_info].revents) {
    read_small(&c->info_fd, c->info_buf, sizeof c->info_buf, &c->info_len);
    if (c->info_fd < 0) parse_info(c);
  }
  if (i_pid >= 0 && p[i_pid].revents) reap(c);
  if (i_in >= 0 && p[i_in].revents) flush_stdin(c);
  return PUMP_PROGRESS;
}

/* The launcher refused to exec bwrap: report its own code and message. */
static cap_code launcher_failure(cell *c, cap_error *err) {
  json_t *v = json_loadb(c->status_buf, c->status_len, 0, NULL);
  const char *code = json_string_value(json_object_get(v, "code"));
  const char *msg = json_string_value(json_object_get(v, "message"));
  cap_code cc = code ? cap_code_from_name(code) : CAP_OK;
  if (cc == CAP_OK) cc = CAP_E_LAUNCH_FAILED;
  cap_fail(err, cc, "launcher: %s", msg ? msg : "failed without a message");
  json_decref(v);
  return cc;
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

bool cell_has_init(const cell *c) { return c->init_pid > 0; }

static long long span(long long from, long long to) { return from && to ? to - from : -1; }

json_t *cell_timings_json(const cell *c) {
  return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "launcherMs", span(c->t_spawn, c->t_exec),
                   "bwrapSetupMs", span(c->t_exec, c->t_sandbox), "nodeToFirstFrameMs",
                   span(c->t_sandbox, c->t_first_frame), "exchangeMs",
                   span(c->t_first_frame, c->t_exit), "joinMs", span(c->t_exit, c->t_joined),
                   "totalMs", span(c->t_spawn, c->t_joined));
}

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
static cap_code ceiling_failure(const cell *c, const char *tail, cap_error *err) {
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
                    "cpu: the cell used its CPU time (maxCellCpuSeconds %lld; %s)",
                    l->max_cell_cpu_seconds,
                    sig == SIGXCPU ? "SIGXCPU" : "SIGKILL at the hard limit or by the kernel");
  if (sig == SIGXFSZ)
    return cap_fail(err, CAP_E_CELL_RESOURCE_LIMIT,
                    "file size: the cell wrote past maxCellFileBytes %lld",
                    l->max_cell_file_bytes);
  return CAP_OK;
}

static cap_code exited_early(cell *c, cap_error *err) {
  /* Give the process a moment to be reaped so the status is meaningful. */
  long long until = mono_ms() + 200;
  while (!c->exited && mono_ms() < until) {
    struct pollfd p = {c->pidfd, POLLIN, 0};
    poll(&p, 1, 20);
    reap(c);
  }
  char tail[400];
  cell_stderr_tail(c, tail, sizeof tail);
  if (ceiling_failure(c, tail, err)) return err->code;
  if (c->exited && WIFSIGNALED(c->wait_status))
    return cap_fail(err, CAP_E_CELL_EXITED, "cell ended by signal %d before answering; stderr: %s",
                    WTERMSIG(c->wait_status), tail);
  return cap_fail(err, CAP_E_CELL_EXITED, "cell exited (status %d) before answering; stderr: %s",
                  c->exited && WIFEXITED(c->wait_status) ? WEXITSTATUS(c->wait_status) : -1,
                  tail);
}

cap_code cell_send(cell *c, const json_t *msg, long long deadline, cap_code timeout_code,
                   cap_error *err) {
  unsigned char *buf;
  size_t len;
  if (frame_encode(msg, (size_t)c->lim->max_frame_bytes, &buf, &len, err)) return err->code;
  free(c->tx);
  c->tx = buf;
  c->tx_len = len;
  c->tx_off = 0;
  flush_stdin(c);
  while (c->tx_off < c->tx_len) {
    if (c->status_fd < 0 && c->status_len) return launcher_failure(c, err);
    pump_result r = pump(c, deadline, err);
    if (r == PUMP_TIMED_OUT)
      return cap_fail(err, timeout_code, "cell did not read its input before the deadline");
    if (r == PUMP_FAILED) return err->code;
  }
  return CAP_OK;
}

cap_code cell_recv(cell *c, long long deadline, cap_code timeout_code, json_t **out,
                   cap_error *err) {
  *out = NULL;
  for (;;) {
    frame_status fs = frame_next(&c->rx, (size_t)c->lim->max_frame_bytes, &c->frame_limits,
                                 out, err);
    if (fs == FRAME_READY) {
      if (!c->t_first_frame) c->t_first_frame = mono_ms();
      return CAP_OK;
    }
    if (fs == FRAME_ERROR) return err->code;
    if (c->status_fd < 0 && c->status_len) return launcher_failure(c, err);
    if (c->out_fd < 0 && c->status_fd < 0) {
      if (c->rx.len > 0)
        return cap_fail(err, CAP_E_FRAME_TRUNCATED,
                        "cell closed its output in the middle of a frame (%zu bytes pending)",
                        c->rx.len);
      return exited_early(c, err);
    }
    pump_result r = pump(c, deadline, err);
    if (r == PUMP_TIMED_OUT) {
      const char *which = timeout_code == CAP_E_CELL_CALL_TIMEOUT ? "callTimeoutMs"
                          : timeout_code == CAP_E_CELL_SHUTDOWN_TIMEOUT ? "shutdownTimeoutMs"
                                                                          : "startupTimeoutMs";
      return cap_fail(err, timeout_code, "cell did not answer within %s", which);
    }
    if (r == PUMP_FAILED) return err->code;
  }
}

cap_code cell_expect(cell *c, const char *type, long long deadline, cap_code timeout_code,
                     json_t **out, cap_error *err) {
  if (cell_recv(c, deadline, timeout_code, out, err)) return err->code;
  const char *got = json_string_value(json_object_get(*out, "type"));
  if (!got || strcmp(got, type) != 0) {
    cap_fail(err, CAP_E_PROTOCOL_VIOLATION, "expected a \"%s\" message, got \"%s\"", type,
             got ? got : "(no type)");
    json_decref(*out);
    *out = NULL;
    return err->code;
  }
  return CAP_OK;
}

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
  close_fd(&c->in_fd);
  while (!c->exited || c->out_fd >= 0 || c->err_fd >= 0) {
    pump_result r = pump(c, deadline, err);
    if (r == PUMP_TIMED_OUT)
      return cap_fail(err, CAP_E_CELL_SHUTDOWN_TIMEOUT,
                      "cell did not exit within shutdownTimeoutMs after shutdown.ack");
    if (r == PUMP_FAILED) return err->code;
  }
  if (c->rx.len > 0)
    return cap_fail(err, CAP_E_FRAME_TRAILING_DATA, "cell sent %zu bytes after shutdown.ack",
                    c->rx.len);
  char tail[400];
  cell_stderr_tail(c, tail, sizeof tail);
  if (ceiling_failure(c, tail, err)) return err->code;
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
  close_fd(&c->in_fd);
  long long grace = c->lim ? c->lim->process_grace_ms : 500;
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
    read_small(&c->info_fd, c->info_buf, sizeof c->info_buf, &c->info_len);
    if (c->init_pidfd < 0 && c->info_len) parse_info(c);
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
      if (err && err->code) snprintf(cause, sizeof cause, " (after %s: %s)",
                                     cap_code_name(err->code), err->message);
      /* A failed join outranks its cause. */
      rc = cap_override(err, CAP_E_CELL_JOIN_FAILED,
                    "cell PID namespace init %d outlived SIGKILL by more than processGraceMs "
                    "%lld ms (%s after %lld ms)%s",
                    (int)c->init_pid, grace, gone ? "exited" : "STILL RUNNING",
                    mono_ms() - killed_at, cause);
    }
  }
  c->t_joined = mono_ms();
  close_fd(&c->init_pidfd);
  close_fd(&c->pidfd);
  close_fd(&c->out_fd);
  close_fd(&c->err_fd);
  close_fd(&c->status_fd);
  close_fd(&c->info_fd);
  frame_buffer_free(&c->rx);
  free(c->tx);
  free(c->stderr_buf);
  c->tx = NULL;
  c->stderr_buf = NULL;
  return rc;
}

cap_code cell_wait_init(cell *c, long long deadline, cap_error *err) {
  while (!cell_has_init(c)) {
    if (c->info_fd < 0)
      return cap_fail(err, CAP_E_ATTEST_WORLD_MISMATCH, "bwrap did not report the cell's init");
    pump_result r = pump(c, deadline, err);
    if (r == PUMP_TIMED_OUT)
      return cap_fail(err, CAP_E_ATTEST_TIMEOUT, "bwrap did not report the cell's init in time");
    if (r == PUMP_FAILED) return err->code;
  }
  return CAP_OK;
}
