#include "call_supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cell.h"
#include "safe_open.h"

static void on_cancel(int sig) {
  (void)sig;
  cell_cancel_requested = 1;
}

static void supervise(host *h, const char *tool, const json_t *input, int out, pid_t parent) {
  /* A SIGKILLed host takes its supervisors with it, and each supervisor's
   * death kills its launcher/bwrap (their own PDEATHSIG): no cell outlives
   * the host. The getppid check closes the window before prctl. */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(1);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_cancel;
  sigaction(SIGTERM, &sa, NULL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  /* stdout belongs to the MCP stream; stdin to the serve loop. */
  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  dup2(devnull, 0);
  dup2(devnull, 1);
  cap_error err = {0};
  json_t *result = NULL, *verdict;
  if (host_call(h, tool, input, &result, &err) == CAP_OK)
    verdict = json_pack("{s:b,s:o}", "ok", 1, "result", result);
  else
    verdict = json_pack("{s:b,s:{s:s,s:s}}", "ok", 0, "error", "code", cap_code_name(err.code),
                        "message", err.message);
  char *text = verdict ? json_dumps(verdict, JSON_COMPACT) : NULL;
  /* A result within maxFrameBytes can re-encode longer (jansson prints
   * every double with 17 digits): the documented code, not INTERNAL. */
  size_t limit = supervisor_result_limit(&h->cfg.limits);
  size_t got = text ? strlen(text) : 0;
  if (got > limit) {
    free(text);
    json_decref(verdict);
    char msg[200];
    snprintf(msg, sizeof msg, "the call result re-encodes to %zu bytes, more than 2 x "
             "maxFrameBytes (%zu)", got, limit);
    verdict = json_pack("{s:b,s:{s:s,s:s}}", "ok", 0, "error", "code", "FRAME_TOO_LARGE",
                        "message", msg);
    text = verdict ? json_dumps(verdict, JSON_COMPACT) : NULL;
  }
  json_decref(verdict);
  if (text) so_write_all(out, text, strlen(text));
  _exit(text ? 0 : 1); /* no atexit: staging belongs to the serving parent */
}

cap_code supervisor_start(host *h, const char *tool, const json_t *input, call_supervisor *s,
                          cap_error *err) {
  memset(s, 0, sizeof *s);
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0)
    return cap_fail(err, CAP_E_LAUNCH_FAILED, "pipe: %s", strerror(errno));
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(p[0]);
    close(p[1]);
    return cap_fail(err, CAP_E_LAUNCH_FAILED, "fork: %s", strerror(errno));
  }
  if (pid == 0) {
    close(p[0]);
    supervise(h, tool, input, p[1], parent);
  }
  close(p[1]);
  s->pid = pid;
  s->result_fd = p[0];
  fcntl(s->result_fd, F_SETFL, O_NONBLOCK);
  s->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (s->pidfd < 0) {
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    close(s->result_fd);
    return cap_fail(err, CAP_E_LAUNCH_FAILED, "pidfd_open: %s", strerror(errno));
  }
  fcntl(s->pidfd, F_SETFD, FD_CLOEXEC);
  return CAP_OK;
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

size_t supervisor_result_limit(const host_limits *lim) {
  return 2 * (size_t)lim->max_frame_bytes;
}

size_t supervisor_verdict_max(const host_limits *lim) {
  return supervisor_result_limit(lim) + 4096; /* the envelope and an error verdict */
}

json_t *supervisor_verdict(call_supervisor *s) {
  json_t *v = s->buf && !s->overflow ? json_loadb(s->buf, s->len, 0, NULL) : NULL;
  if (!v)
    v = json_pack("{s:b,s:{s:s,s:s}}", "ok", 0, "error", "code", "INTERNAL", "message",
                  "call supervisor ended without a verdict");
  return v;
}

void supervisor_cancel(call_supervisor *s) {
  if (!s->exited) syscall(SYS_pidfd_send_signal, s->pidfd, SIGTERM, NULL, 0);
}

void supervisor_finish(call_supervisor *s) {
  int status;
  while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR) {
  }
  close(s->pidfd);
  close(s->result_fd);
  free(s->buf);
  s->buf = NULL;
}
