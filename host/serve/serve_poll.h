/* The serve loop's poll set (serve_poll.c): one pollfd per thing the loop
 * waits on, reached by name. Its layout (the fixed slots, then a result
 * and an exit descriptor per running call, then the same per warm cell) is
 * written here and nowhere else. */
#ifndef SERVE_POLL_H
#define SERVE_POLL_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

#include "call/supervisor.h"

typedef enum {
  SERVE_POLL_STDIN,           /* a request line to read */
  SERVE_POLL_SIGNALS,         /* the signalfd */
  SERVE_POLL_STDOUT,          /* queued answers to write */
  SERVE_POLL_SNAPSHOT_RESULT, /* the snapshot job's verdict */
  SERVE_POLL_SNAPSHOT_EXIT,   /* the snapshot job's pidfd */
  SERVE_POLL_LOG,             /* the audit log's buffered lines */
  SERVE_POLL_FIXED,           /* how many slots come before the supervisors */
} serve_poll_slot;

typedef struct {
  struct pollfd *fds;
  size_t calls, warm; /* running calls and warm cells watched */
} serve_poll_set;

/* What poll said of one supervisor: its verdict pipe is readable, it exited. */
typedef struct {
  bool readable, exited;
} serve_poll_supervisor;

/* A set with every slot unwatched (fd -1); false when out of memory. */
bool serve_poll_set_open(serve_poll_set *p, size_t calls, size_t warm);
void serve_poll_set_close(serve_poll_set *p);
/* Watch fd (-1: nothing) for events at a fixed slot. */
void serve_poll_watch(serve_poll_set *p, serve_poll_slot slot, int fd, short events);
/* Watch running call i's, or warm cell i's, supervisor. */
void serve_poll_watch_call(serve_poll_set *p, size_t i, const call_supervisor *sup);
void serve_poll_watch_warm(serve_poll_set *p, size_t i, const call_supervisor *sup);
/* poll(2) over the set: false when it failed (not for EINTR). */
bool serve_poll_wait(serve_poll_set *p, int timeout_ms);
bool serve_poll_ready(const serve_poll_set *p, serve_poll_slot slot);
serve_poll_supervisor serve_poll_call(const serve_poll_set *p, size_t i);
serve_poll_supervisor serve_poll_warm(const serve_poll_set *p, size_t i);

#endif
