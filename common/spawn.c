#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "safe_open.h"

static void child_exec(const char *exe, char *const *args, const int *child_fds, int nfds, int err_pipe,
                       pid_t parent) {
  int moved[SPAWN_MAX_FDS];
  /* Lift the error pipe and every source above the target range first, so
   * that no dup2 below can clobber a source still needed. */
  int err_hi = fcntl(err_pipe, F_DUPFD_CLOEXEC, 64);
  if (err_hi < 0) goto fail;
  err_pipe = err_hi;
  for (int i = 0; i < nfds; i++) {
    int src = child_fds[i] >= 0 ? child_fds[i] : open("/dev/null", O_RDWR | O_CLOEXEC);
    moved[i] = fcntl(src, F_DUPFD_CLOEXEC, 64);
    if (moved[i] < 0) goto fail;
  }
  for (int i = 0; i < nfds; i++)
    if (dup2(moved[i], i) < 0) goto fail; /* dup2 clears CLOEXEC on i */
  /* Only the contract's descriptors (and the CLOEXEC error pipe) remain. */
  for (int fd = nfds; fd < err_hi; fd++) close(fd);
  so_close_from(err_hi + 1);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  for (int s = 1; s < NSIG; s++) signal(s, SIG_DFL);
  setpgid(0, 0);
  /* If the host dies, so does the launcher, bwrap, and with it the cell. */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) goto fail;
  const char *base = strrchr(exe, '/');
  char *const own[] = {(char *)(base ? base + 1 : exe), NULL};
  char *const empty_env[] = {NULL};
  execve(exe, args ? args : own, empty_env);
fail:;
  int e = errno;
  so_write_all(err_pipe, &e, sizeof e);
  _exit(127);
}

cap_code spawn_program(const char *exe, char *const argv[], const int *child_fds, int nfds, pid_t *pid,
                       int *pidfd, cap_error *err) {
  if (nfds > SPAWN_MAX_FDS) return cap_fail(err, CAP_E_INTERNAL, "too many child fds");
  int ep[2];
  if (pipe2(ep, O_CLOEXEC) != 0) return cap_fail(err, CAP_E_LAUNCH_FAILED, "pipe: %s", strerror(errno));
  pid_t parent = getpid();
  pid_t child = fork();
  if (child < 0) {
    close(ep[0]);
    close(ep[1]);
    return cap_fail(err, CAP_E_LAUNCH_FAILED, "fork: %s", strerror(errno));
  }
  if (child == 0) {
    close(ep[0]);
    child_exec(exe, argv, child_fds, nfds, ep[1], parent);
  }
  close(ep[1]);
  int child_errno = 0;
  ssize_t n;
  do {
    n = read(ep[0], &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  close(ep[0]);
  if (n > 0) {
    while (waitpid(child, NULL, 0) < 0 && errno == EINTR) {
    }
    return cap_fail(err, CAP_E_LAUNCH_FAILED, "cannot execute %s: %s", exe, strerror(child_errno));
  }
  int fd = (int)syscall(SYS_pidfd_open, child, 0);
  if (fd < 0) {
    kill(child, SIGKILL);
    while (waitpid(child, NULL, 0) < 0 && errno == EINTR) {
    }
    return cap_fail(err, CAP_E_LAUNCH_FAILED, "pidfd_open: %s", strerror(errno));
  }
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  *pid = child;
  *pidfd = fd;
  return CAP_OK;
}
