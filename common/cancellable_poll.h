/* poll(2) for a job a signal handler can cancel (a supervisor's SIGTERM
 * sets a flag): the flag is read with signals held, and they arrive only
 * inside ppoll, so a cancellation between the check and the wait can never
 * leave the job waiting out its whole deadline. */
#ifndef CANCELLABLE_POLL_H
#define CANCELLABLE_POLL_H

#include <poll.h>
#include <signal.h>

/* As poll(2) with timeout_ms (a negative timeout waits without end), but
 * -1 with errno ECANCELED when *cancel is nonzero before or during the
 * wait. cancel may be NULL: then it is plain ppoll. */
int cancellable_poll(struct pollfd *fds, nfds_t n, long long timeout_ms, const volatile sig_atomic_t *cancel);

#endif
