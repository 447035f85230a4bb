#include "serve_poll.h"

#include <errno.h>
#include <stdlib.h>

/* Slots: SERVE_POLL_FIXED named ones, then two per running call (verdict
 * pipe, pidfd), then two per warm cell. */
static size_t call_slot_index(size_t i) {
  return SERVE_POLL_FIXED + 2 * i;
}

static size_t warm_slot_index(const serve_poll_set *p, size_t i) {
  return SERVE_POLL_FIXED + 2 * p->calls + 2 * i;
}

static size_t slot_count(const serve_poll_set *p) {
  return SERVE_POLL_FIXED + 2 * p->calls + 2 * p->warm;
}

bool serve_poll_set_open(serve_poll_set *p, size_t calls, size_t warm) {
  p->calls = calls;
  p->warm = warm;
  p->fds = calloc(slot_count(p), sizeof *p->fds);
  if (!p->fds) return false;
  for (size_t i = 0; i < slot_count(p); i++) p->fds[i] = (struct pollfd){-1, 0, 0};
  return true;
}

void serve_poll_set_close(serve_poll_set *p) {
  free(p->fds);
  p->fds = NULL;
}

void serve_poll_watch(serve_poll_set *p, serve_poll_slot slot, int fd, short events) {
  p->fds[slot] = (struct pollfd){fd, events, 0};
}

static void watch_supervisor(serve_poll_set *p, size_t at, const call_supervisor *sup) {
  p->fds[at] = (struct pollfd){sup->result_fd, POLLIN, 0};
  p->fds[at + 1] = (struct pollfd){sup->pidfd, POLLIN, 0};
}

void serve_poll_watch_call(serve_poll_set *p, size_t i, const call_supervisor *sup) {
  watch_supervisor(p, call_slot_index(i), sup);
}

void serve_poll_watch_warm(serve_poll_set *p, size_t i, const call_supervisor *sup) {
  watch_supervisor(p, warm_slot_index(p, i), sup);
}

bool serve_poll_wait(serve_poll_set *p, int timeout_ms) {
  return poll(p->fds, slot_count(p), timeout_ms) >= 0 || errno == EINTR;
}

bool serve_poll_ready(const serve_poll_set *p, serve_poll_slot slot) {
  return p->fds[slot].revents != 0;
}

static serve_poll_supervisor supervisor_at(const serve_poll_set *p, size_t at) {
  return (serve_poll_supervisor){p->fds[at].revents != 0, p->fds[at + 1].revents != 0};
}

serve_poll_supervisor serve_poll_call(const serve_poll_set *p, size_t i) {
  return supervisor_at(p, call_slot_index(i));
}

serve_poll_supervisor serve_poll_warm(const serve_poll_set *p, size_t i) {
  return supervisor_at(p, warm_slot_index(p, i));
}
