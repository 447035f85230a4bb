/* serve's stderr: a bounded queue written without blocking (serve_log.h).
 * The audit log (C19) and every other line serve prints go through
 * `stderr`, so replacing that one stream covers them all. A pipe or a
 * terminal is written through a description of its own, reopened with
 * O_NONBLOCK, so the flag never leaks to the description serve shares with
 * its parent; a socket is sent to with MSG_DONTWAIT; a file never stalls. */
#include "serve_log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"

/* Room kept for the line that reports drops, so it always fits. */
#define NOTICE_ROOM 200

static struct {
  FILE *original, *stream;
  int fd;
  bool own_fd, socket, broken, dropping_line;
  char queue[SERVE_LOG_QUEUE_BYTES];
  size_t len;
  unsigned long long dropped, unreported;
} lg = {.fd = -1};

static void queue_notice(void) {
  if (lg.unreported == 0 || lg.broken) return;
  char notice[NOTICE_ROOM];
  int n = snprintf(notice, sizeof notice,
                   "capsule-host: %llu log lines dropped: stderr was not "
                   "read (the log queue holds %u bytes)\n",
                   lg.unreported, SERVE_LOG_QUEUE_BYTES);
  if (n <= 0 || lg.len + (size_t)n > sizeof lg.queue) return;
  memcpy(lg.queue + lg.len, notice, (size_t)n);
  lg.len += (size_t)n;
  lg.unreported = 0;
}

/* stdio hands over whole lines (line buffered); one that does not fit is
 * dropped whole, with any rest of it that follows. */
static ssize_t queue_write(void *cookie, const char *data, size_t n) {
  (void)cookie;
  bool ends_line = n > 0 && data[n - 1] == '\n';
  if (!lg.dropping_line && !lg.broken) {
    queue_notice();
    if (lg.len + n + NOTICE_ROOM <= sizeof lg.queue) {
      memcpy(lg.queue + lg.len, data, n);
      lg.len += n;
      serve_log_flush();
      return (ssize_t)n;
    }
  }
  lg.dropping_line = !ends_line;
  if (ends_line) lg.dropped++, lg.unreported++;
  serve_log_flush();
  return (ssize_t)n; /* taken: a drop is counted, never an error to stdio */
}

static ssize_t write_some(const char *p, size_t n) {
  if (lg.socket) return send(lg.fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
  return write(lg.fd, p, n);
}

void serve_log_flush(void) {
  size_t off = 0;
  while (!lg.broken && off < lg.len) {
    ssize_t n = write_some(lg.queue + off, lg.len - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0)
      lg.broken = true; /* stderr is gone: nothing more can be said on it */
    else
      off += (size_t)n;
  }
  if (lg.broken) off = lg.len;
  memmove(lg.queue, lg.queue + off, lg.len - off);
  lg.len -= off;
  if (off > 0 && lg.unreported) queue_notice();
}

int serve_log_pollfd(void) {
  return lg.stream && lg.len && !lg.broken ? lg.fd : -1;
}

unsigned long long serve_log_dropped(void) {
  return lg.dropped;
}

/* A description of fd 2 that never blocks serve, or -1. */
static int nonblocking_stderr(bool *own, bool *socket) {
  struct stat st;
  *own = *socket = false;
  if (fstat(2, &st) != 0) return 2; /* closed: writes fail, nothing waits */
  if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) return 2;
  if (S_ISSOCK(st.st_mode)) {
    *socket = true;
    return 2;
  }
  int fd = open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd >= 0) *own = true;
  return fd;
}

/* A child forked from serve (a call's supervisor, the snapshot job) gets
 * the plain stderr back: the queue and its descriptor are the serving
 * parent's, and a supervisor closes that descriptor, whose number a cell's
 * pipe may take next. */
static void plain_stderr_in_child(void) {
  if (!lg.stream) return;
  stderr = lg.original;
  lg.stream = NULL;
  lg.fd = -1;
  lg.own_fd = false;
  lg.len = 0;
}

bool serve_log_open(void) {
  static bool registered;
  if (!registered && pthread_atfork(NULL, NULL, plain_stderr_in_child) == 0) registered = true;
  cookie_io_functions_t io = {.write = queue_write};
  lg.fd = nonblocking_stderr(&lg.own_fd, &lg.socket);
  if (lg.fd < 0) {
    fprintf(stderr,
            "capsule-host: stderr cannot be reopened without blocking (%s): a client "
            "that does not read stderr can stall serve\n",
            strerror(errno));
    return false;
  }
  FILE *stream = fopencookie(NULL, "w", io);
  if (!stream || setvbuf(stream, NULL, _IOLBF, 16384) != 0) {
    if (stream) fclose(stream);
    if (lg.own_fd) close(lg.fd);
    lg.fd = -1;
    fprintf(stderr,
            "capsule-host: the non-blocking log cannot be set up: a client that does "
            "not read stderr can stall serve\n");
    return false;
  }
  lg.original = stderr;
  lg.stream = stream;
  stderr = stream;
  return true;
}

void serve_log_close(long long deadline_ms) {
  if (!lg.stream) return;
  fflush(lg.stream);
  for (serve_log_flush(); lg.len && !lg.broken && mono_ms() < deadline_ms; serve_log_flush()) {
    struct pollfd w = {lg.fd, POLLOUT, 0};
    long long left = deadline_ms - mono_ms();
    poll(&w, 1, left > 0 ? (int)left : 0);
  }
  for (size_t i = 0; i < lg.len; i++) /* what the reader never took */
    if (lg.queue[i] == '\n') lg.dropped++, lg.unreported++;
  lg.len = 0;
  /* The last word, only if stderr takes it now: the exit never waits. */
  queue_notice();
  serve_log_flush();
  stderr = lg.original;
  fclose(lg.stream);
  lg.stream = NULL;
  if (lg.own_fd) close(lg.fd);
  lg.fd = -1;
}
