#include "subproc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cancellable_poll.h"
#include "clock.h"
#include "spawn.h"

/* Reads the capture pipe until EOF, the deadline, max_out bytes or the
 * cancellation. */
static subproc_result collect(int fd, long long deadline, size_t max_out, const volatile sig_atomic_t *cancel,
                              char *buf, size_t *len) {
  for (;;) {
    long long left = deadline - mono_ms();
    if (left <= 0) return SUBPROC_TIMED_OUT;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int n = cancellable_poll(&p, 1, left, cancel);
    if (n < 0 && errno == ECANCELED) return SUBPROC_CANCELLED;
    if (n <= 0) continue; /* EINTR or a timeout the loop re-checks */
    ssize_t r = read(fd, buf + *len, max_out + 1 - *len);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return SUBPROC_DONE;
    *len += (size_t)r;
    if (*len > max_out) return SUBPROC_OUTPUT_TOO_LARGE;
  }
}

subproc_result subproc_run(char *const argv[], subproc_options opt, long long timeout_ms, size_t max_out,
                           char **out, size_t *out_len, int *exit_status, cap_error *why) {
  cap_error ignored = {0};
  if (!why) why = &ignored;
  int p[2];
  char *buf = malloc(max_out + 2);
  if (!buf || pipe2(p, O_CLOEXEC) != 0) {
    cap_fail(why, CAP_E_INTERNAL, "cannot run %s: %s", argv[0], strerror(errno));
    free(buf);
    return SUBPROC_SPAWN_FAILED;
  }
  int fds[4] = {-1, -1, -1, opt.fd3};
  fds[opt.capture_fd == 2 ? 2 : 1] = p[1];
  pid_t pid;
  int pidfd;
  cap_code started = spawn_program(argv[0], argv, fds, opt.fd3 >= 0 ? 4 : 3, &pid, &pidfd, why);
  close(p[1]);
  if (started != CAP_OK) {
    close(p[0]);
    free(buf);
    return SUBPROC_SPAWN_FAILED;
  }
  size_t len = 0;
  subproc_result rc = collect(p[0], mono_ms() + timeout_ms, max_out, opt.cancel, buf, &len);
  close(p[0]);
  if (rc != SUBPROC_DONE) syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  close(pidfd);
  if (rc != SUBPROC_DONE) {
    if (rc == SUBPROC_CANCELLED)
      cap_fail(why, CAP_E_CALL_CANCELLED, "%s was ended: its job was cancelled", argv[0]);
    else if (rc == SUBPROC_TIMED_OUT)
      cap_fail(why, CAP_E_LAUNCH_FAILED, "%s did not finish within %lld ms", argv[0], timeout_ms);
    else
      cap_fail(why, CAP_E_LAUNCH_FAILED, "%s wrote more than %zu bytes", argv[0], max_out);
    free(buf);
    return rc;
  }
  buf[len] = '\0';
  *out = buf;
  *out_len = len;
  *exit_status = status;
  return SUBPROC_DONE;
}
