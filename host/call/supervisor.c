#include "supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "admit/config.h"
#include "attest/snapshot.h"
#include "call.h"
#include "cell/cell.h"
#include "host_state.h"
#include "safe_open.h"
#include "verdict.h"
#include "warm_cell.h"

static void on_cancel(int sig) {
  (void)sig;
  cell_cancel_requested = 1;
}

/* What a supervisor runs: a call in a fresh cell, or a warm cell of one
 * capsule that waits for its call on the assignment pipe. */
typedef enum { JOB_CALL, JOB_WARM_CELL, JOB_SNAPSHOT } job_kind;

typedef struct {
  job_kind kind;
  const char *tool;    /* JOB_CALL */
  const json_t *input; /* JOB_CALL */
  size_t warm_cap;     /* JOB_WARM_CELL */
  int assign_fd;       /* JOB_WARM_CELL, in the child: the assignment pipe */
} supervised_job;

static json_t *run_job(host *h, const supervised_job *job) {
  cap_error err = {0};
  json_t *result = NULL;
  cap_code rc;
  if (job->kind == JOB_SNAPSHOT) {
    rc = snapshot_job(h, &result, &err);
    return rc ? verdict_error(err.code, err.message, false) : verdict_snapshot(result);
  }
  if (job->kind == JOB_WARM_CELL) {
    warm_outcome outcome = warm_cell_run(h, job->warm_cap, job->assign_fd, &result, &err);
    if (outcome == WARM_RECYCLED) return verdict_recycled();
    if (outcome == WARM_IDLE_FAILED) return verdict_error(err.code, err.message, true);
    rc = outcome == WARM_CALL_OK ? CAP_OK : err.code;
  } else {
    rc = call_tool(h, job->tool, job->input, &result, &err);
  }
  if (rc == CAP_OK) return verdict_result(result);
  return verdict_error(err.code, err.message, false);
}

/* A forked supervisor keeps only what it needs: every other descriptor of
 * the serving host (above all the other warm cells' assignment pipes, whose
 * end of input must reach them) is closed. */
static void close_all_but(int *keep, size_t n) {
  for (size_t i = 1; i < n; i++) /* insertion sort: n is tiny */
    for (size_t j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
      int t = keep[j];
      keep[j] = keep[j - 1];
      keep[j - 1] = t;
    }
  unsigned lo = 3;
  for (size_t i = 0; i < n; i++) {
    if (keep[i] < (int)lo) continue;
    if ((unsigned)keep[i] > lo) syscall(SYS_close_range, lo, (unsigned)keep[i] - 1, 0);
    lo = (unsigned)keep[i] + 1;
  }
  syscall(SYS_close_range, lo, ~0U, 0);
}

static void supervise(host *h, const supervised_job *job, int out, pid_t parent) {
  /* A dead host (even SIGKILLed) sends its supervisors SIGTERM, which they
   * handle as a cancellation: each joins its own cell (pidfd kill of bwrap,
   * then the cell's init) before it exits. A SIGKILL here instead would
   * leave the cell to bwrap's own parent-death signals, which bwrap 0.8.0
   * re-arms only after dropping privileges and, in the sandbox, only late in
   * its setup: a host killed while a cell was starting left bwrap behind.
   * The getppid check closes the window before prctl. */
  if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent) _exit(1);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_cancel;
  sigaction(SIGTERM, &sa, NULL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  int keep[] = {out, job->assign_fd, h->stg.dirfd, h->stg.lockfd};
  close_all_but(keep, sizeof keep / sizeof keep[0]);
  /* stdout belongs to the MCP stream; stdin to the serve loop. */
  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  dup2(devnull, 0);
  dup2(devnull, 1);
  json_t *verdict = run_job(h, job);
  char *text = verdict ? json_dumps(verdict, JSON_COMPACT) : NULL;
  /* A result within maxFrameBytes can re-encode longer (jansson prints
   * every double with 17 digits): the documented code, not INTERNAL. */
  size_t limit = supervisor_result_limit(&h->cfg.limits);
  size_t got = text ? strlen(text) : 0;
  if (got > limit) {
    free(text);
    json_decref(verdict);
    char msg[200];
    snprintf(msg, sizeof msg,
             "the call result re-encodes to %zu bytes, more than 2 x "
             "maxFrameBytes (%zu)",
             got, limit);
    verdict = verdict_error(CAP_E_FRAME_TOO_LARGE, msg, false);
    text = verdict ? json_dumps(verdict, JSON_COMPACT) : NULL;
  }
  json_decref(verdict);
  if (text) so_write_all(out, text, strlen(text));
  _exit(text ? 0 : 1); /* no atexit: staging belongs to the serving parent */
}

static cap_code start_job(host *h, supervised_job *job, call_supervisor *s, cap_error *err) {
  memset(s, 0, sizeof *s);
  s->assign_fd = -1;
  int p[2], a[2] = {-1, -1};
  if (pipe2(p, O_CLOEXEC) != 0) return cap_fail(err, CAP_E_LAUNCH_FAILED, "pipe: %s", strerror(errno));
  if (job->kind == JOB_WARM_CELL && pipe2(a, O_CLOEXEC) != 0) {
    close(p[0]);
    close(p[1]);
    return cap_fail(err, CAP_E_LAUNCH_FAILED, "pipe: %s", strerror(errno));
  }
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(p[0]);
    close(p[1]);
    if (a[0] >= 0) {
      close(a[0]);
      close(a[1]);
    }
    return cap_fail(err, CAP_E_LAUNCH_FAILED, "fork: %s", strerror(errno));
  }
  if (pid == 0) {
    close(p[0]);
    if (a[1] >= 0) close(a[1]);
    job->assign_fd = a[0];
    supervise(h, job, p[1], parent);
  }
  close(p[1]);
  if (a[0] >= 0) {
    close(a[0]);
    s->assign_fd = a[1];
    fcntl(s->assign_fd, F_SETFL, O_NONBLOCK);
  }
  s->pid = pid;
  s->result_fd = p[0];
  fcntl(s->result_fd, F_SETFL, O_NONBLOCK);
  s->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (s->pidfd < 0) {
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    close(s->result_fd);
    if (s->assign_fd >= 0) close(s->assign_fd);
    return cap_fail(err, CAP_E_LAUNCH_FAILED, "pidfd_open: %s", strerror(errno));
  }
  fcntl(s->pidfd, F_SETFD, FD_CLOEXEC);
  return CAP_OK;
}

cap_code supervisor_start(host *h, const char *tool, const json_t *input, call_supervisor *s,
                          cap_error *err) {
  supervised_job job = {.kind = JOB_CALL, .tool = tool, .input = input, .assign_fd = -1};
  return start_job(h, &job, s, err);
}

cap_code supervisor_start_warm(host *h, size_t cap_index, call_supervisor *s, cap_error *err) {
  supervised_job job = {.kind = JOB_WARM_CELL, .warm_cap = cap_index, .assign_fd = -1};
  return start_job(h, &job, s, err);
}

cap_code supervisor_start_snapshot(host *h, call_supervisor *s, cap_error *err) {
  supervised_job job = {.kind = JOB_SNAPSHOT, .assign_fd = -1};
  return start_job(h, &job, s, err);
}

bool supervisor_assign(call_supervisor *s, const char *tool, const json_t *input) {
  json_t *a = json_pack("{s:s,s:O}", "tool", tool, "input", input);
  char *text = a ? json_dumps(a, JSON_COMPACT) : NULL;
  json_decref(a);
  if (!text) return false;
  size_t len = strlen(text);
  /* One write the pipe takes whole, or no warm cell: the loop never blocks. */
  ssize_t n = len < WARM_ASSIGNMENT_MAX ? write(s->assign_fd, text, len) : -1;
  free(text);
  if (n != (ssize_t)len) return false;
  close(s->assign_fd); /* EOF ends the assignment */
  s->assign_fd = -1;
  return true;
}

void supervisor_recycle(call_supervisor *s) {
  if (s->assign_fd >= 0) close(s->assign_fd); /* EOF without a call: shut down */
  s->assign_fd = -1;
}

bool supervisor_read(call_supervisor *s, size_t max) {
  for (;;) {
    char chunk[65536];
    ssize_t n = read(s->result_fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return true; /* EAGAIN */
    if (n == 0) return false;
    if (s->overflow || s->len + (size_t)n > max) {
      s->overflow = true;
      continue;
    }
    char *p = realloc(s->buf, s->len + (size_t)n + 1);
    if (!p) {
      s->overflow = true;
      continue;
    }
    s->buf = p;
    memcpy(s->buf + s->len, chunk, (size_t)n);
    s->len += (size_t)n;
    s->buf[s->len] = '\0';
  }
}

void supervisor_drain(call_supervisor *s, size_t max) {
  while (supervisor_read(s, max)) {
    struct pollfd w = {s->result_fd, POLLIN, 0};
    if (poll(&w, 1, 100) <= 0) break; /* it exited: the pipe drains at once */
  }
  s->exited = true;
}

size_t supervisor_result_limit(const host_limits *lim) {
  return 2 * (size_t)lim->max_frame_bytes;
}

size_t supervisor_verdict_max(const host_limits *lim) {
  return supervisor_result_limit(lim) + 4096; /* the envelope and an error verdict */
}

json_t *supervisor_verdict(call_supervisor *s) {
  json_t *v = s->buf && !s->overflow ? json_loadb(s->buf, s->len, 0, NULL) : NULL;
  return v ? v : verdict_error(CAP_E_INTERNAL, "call supervisor ended without a verdict", false);
}

void supervisor_cancel(call_supervisor *s) {
  if (!s->exited) syscall(SYS_pidfd_send_signal, s->pidfd, SIGTERM, NULL, 0);
}

void supervisor_finish(call_supervisor *s) {
  int status;
  while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (s->assign_fd >= 0) close(s->assign_fd);
  s->assign_fd = -1;
  close(s->pidfd);
  close(s->result_fd);
  free(s->buf);
  s->buf = NULL;
}
