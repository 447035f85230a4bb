/* serve's stderr (serve_log.c): while serve runs, `stderr` is a stream
 * whose bytes go to a bounded queue written without blocking, so a client
 * that never reads stderr cannot stall the loop (or SIGTERM). Lines that do
 * not fit are dropped whole and counted; the count is logged as soon as
 * stderr takes bytes again, and once more at the end. */
#ifndef SERVE_LOG_H
#define SERVE_LOG_H

#include <stdbool.h>
#include <stddef.h>

/* The queue's bound: what an unread stderr may hold back before lines are
 * dropped. */
#define SERVE_LOG_QUEUE_BYTES (256u * 1024u)

/* Routes stderr through the queue. Returns false (and leaves stderr as it
 * was, saying why on it) when no non-blocking description of fd 2 exists. */
bool serve_log_open(void);
/* Writes what fd 2 accepts now; never blocks. */
void serve_log_flush(void);
/* The descriptor to poll for POLLOUT, or -1 when nothing is queued. */
int serve_log_pollfd(void);
/* Lines dropped so far because stderr was not read. */
unsigned long long serve_log_dropped(void);
/* Gives the queue until deadline_ms (monotonic) to leave, then puts the
 * original stderr back; what is still queued is counted as dropped. */
void serve_log_close(long long deadline_ms);

/* One audit line per tools/call (serve_log_call.c): tool, "ok" or the code, the
 * milliseconds since since_ms (0: none), and how it ran or why it did not. */
void serve_log_call(const char *tool, const char *outcome, long long since_ms, const char *how);

#endif
