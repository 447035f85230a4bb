#include "cancellable_poll.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <time.h>

int cancellable_poll(struct pollfd *fds, nfds_t n, long long timeout_ms,
                     const volatile sig_atomic_t *cancel) {
  struct timespec ts = {.tv_sec = (time_t)(timeout_ms / 1000),
                        .tv_nsec = (long)(timeout_ms % 1000) * 1000000L};
  sigset_t all, was;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &was);
  int r;
  if (cancel && *cancel) {
    errno = ECANCELED;
    r = -1;
  } else {
    r = ppoll(fds, n, timeout_ms < 0 ? NULL : &ts, &was);
    /* The handler that set the flag ran inside ppoll (EINTR). */
    if (r < 0 && errno == EINTR && cancel && *cancel) errno = ECANCELED;
  }
  int saved = errno;
  pthread_sigmask(SIG_SETMASK, &was, NULL);
  errno = saved;
  return r;
}
