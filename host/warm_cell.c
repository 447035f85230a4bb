/* A warm cell's life in its supervisor: start, wait for the loader, wait
 * idle for a call (or for the end of the assignment pipe, which recycles
 * it), then the call exactly as in a fresh cell. */
#include "warm_cell.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cell.h"
#include "clock.h"
#include "strict_json.h"

typedef enum { WAIT_ASSIGNED, WAIT_RECYCLE, WAIT_CELL_FAILED } wait_result;

/* The assignment, read to EOF (the serve loop writes it whole and closes). */
static wait_result read_assignment(int fd, json_t **assignment, cap_error *err) {
  char *buf = malloc(WARM_ASSIGNMENT_MAX + 1);
  size_t len = 0;
  for (;;) {
    if (!buf) break;
    ssize_t n = read(fd, buf + len, WARM_ASSIGNMENT_MAX + 1 - len);
    if (n < 0 && errno == EINTR) {
      if (cell_cancel_requested) break;
      continue;
    }
    if (n <= 0) break;
    len += (size_t)n;
    if (len > WARM_ASSIGNMENT_MAX) break;
  }
  if (len == 0 || len > WARM_ASSIGNMENT_MAX || cell_cancel_requested) {
    free(buf);
    return WAIT_RECYCLE; /* EOF without a call, or cancelled while idle */
  }
  *assignment = json_loadb(buf, len, 0, NULL);
  free(buf);
  if (!json_is_string(json_object_get(*assignment, "tool")) ||
      !json_object_get(*assignment, "input")) {
    json_decref(*assignment);
    *assignment = NULL;
    cap_fail(err, CAP_E_INTERNAL, "malformed warm cell assignment");
    return WAIT_CELL_FAILED;
  }
  return WAIT_ASSIGNED;
}

/* Idle: the loader says nothing until "load". Any output, end of output or
 * exit of the cell before the call arrives is a failure of the idle cell. */
static wait_result wait_for_call(cell *c, int assign_fd, json_t **assignment, cap_error *err) {
  for (;;) {
    if (cell_cancel_requested) return WAIT_RECYCLE;
    struct pollfd p[3] = {{assign_fd, POLLIN, 0}, {c->out_fd, POLLIN, 0}, {c->pidfd, POLLIN, 0}};
    int r = poll(p, 3, -1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      cap_fail(err, CAP_E_INTERNAL, "poll: %s", strerror(errno));
      return WAIT_CELL_FAILED;
    }
    if (p[1].revents || p[2].revents) {
      json_t *msg = NULL;
      cap_code rc = cell_recv(c, mono_ms() + c->lim->shutdown_timeout_ms,
                              CAP_E_CELL_START_TIMEOUT, &msg, err);
      json_decref(msg);
      if (!rc) cap_fail(err, CAP_E_PROTOCOL_VIOLATION, "warm cell spoke before it was given a call");
      return WAIT_CELL_FAILED;
    }
    if (p[0].revents) return read_assignment(assign_fd, assignment, err);
  }
}

warm_outcome warm_cell_run(host *h, size_t cap_index, int assign_fd, json_t **result,
                           cap_error *err) {
  *result = NULL;
  if (cell_cancel_requested) return WARM_RECYCLED; /* ended before it started */
  loaded_capsule *cap = &h->caps[cap_index];
  char *doc = host_launch_doc(h, &cap->guest, cap, err);
  if (!doc) return WARM_IDLE_FAILED;
  cell c;
  cap_code rc = cell_start_launcher(&c, h->launcher, doc, &h->cfg.limits, err);
  free(doc);
  if (rc) return WARM_IDLE_FAILED;
  rc = cell_expect(&c, "loader.ready", mono_ms() + h->cfg.limits.startup_timeout_ms,
                   CAP_E_CELL_START_TIMEOUT, NULL, err);
  if (!rc) c.loader_ready = true;
  json_t *assignment = NULL;
  wait_result w = rc ? WAIT_CELL_FAILED : wait_for_call(&c, assign_fd, &assignment, err);
  close(assign_fd);
  if (w != WAIT_ASSIGNED) {
    if (w == WAIT_RECYCLE) {
      /* The loader's own shutdown: no guest was ever loaded. */
      cell_cancel_requested = 0;
      rc = cell_shutdown(&c, err);
    }
    cap_code jr = cell_join(&c, err);
    if (w == WAIT_RECYCLE && !rc && !jr) return WARM_RECYCLED;
    return WARM_IDLE_FAILED;
  }
  rc = host_call_in_warm_cell(h, cap, &c, json_string_value(json_object_get(assignment, "tool")),
                              json_object_get(assignment, "input"), result, err);
  json_decref(assignment);
  return rc ? WARM_CALL_FAILED : WARM_CALL_OK;
}
