#include "subproc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "safe_open.h"


subproc_result subproc_run(char *const argv[], long long timeout_ms, size_t max_out,
                           char **out, size_t *out_len, int *exit_status) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return SUBPROC_SPAWN_FAILED;
  pid_t pid = fork();
  if (pid < 0) {
    close(p[0]);
    close(p[1]);
    return SUBPROC_SPAWN_FAILED;
  }
  if (pid == 0) {
    int devnull = open("/dev/null", O_RDWR);
    dup2(devnull, 0);
    dup2(p[1], 1);
    dup2(devnull, 2);
    so_close_from(3);
    char *const empty_env[] = {NULL};
    execve(argv[0], argv, empty_env);
    _exit(127);
  }
  close(p[1]);
  size_t cap = max_out + 1, len = 0;
  char *buf = malloc(cap + 1);
  subproc_result rc = SUBPROC_DONE;
  long long deadline = mono_ms() + timeout_ms;
  while (buf) {
    long long left = deadline - mono_ms();
    if (left <= 0) {
      rc = SUBPROC_TIMED_OUT;
      break;
    }
    struct pollfd pfd = {.fd = p[0], .events = POLLIN};
    int n = poll(&pfd, 1, (int)left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    ssize_t r = read(p[0], buf + len, cap - len);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    len += (size_t)r;
    if (len > max_out) {
      rc = SUBPROC_OUTPUT_TOO_LARGE;
      break;
    }
  }
  close(p[0]);
  if (rc != SUBPROC_DONE || !buf) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!buf) return SUBPROC_SPAWN_FAILED;
  if (rc != SUBPROC_DONE) {
    free(buf);
    return rc;
  }
  buf[len] = '\0';
  *out = buf;
  *out_len = len;
  *exit_status = status;
  return SUBPROC_DONE;
}
