/* A warm cell's life in its supervisor: start, wait for the loader, load
 * and describe the guest as a describe cell does and compare it with the
 * admitted descriptor (warmCellPreload, the default; 0 leaves the loader
 * waiting for "load" and no guest code runs before a call), wait idle for
 * a call (or for the end of the assignment pipe, which recycles it), then
 * the call exactly as in a fresh cell. Anything the cell does while idle,
 * a frame, an exit, a ceiling, is the idle cell's failure: reaped, logged
 * and replaced by the pool, and charged to no call. */
#include "warm_cell.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admit/capsule.h"
#include "call.h"
#include "cancellable_poll.h"
#include "cell/cell.h"
#include "cell/described_cell.h"
#include "clock.h"
#include "host_state.h"
#include "strict_json.h"

typedef enum { WAIT_ASSIGNED, WAIT_RECYCLE, WAIT_CANCELLED, WAIT_CELL_FAILED } wait_result;

/* Whether a call was assigned and is still unread in the pipe: the serve
 * loop writes an assignment whole before it can cancel that call. */
static bool assignment_waiting(int fd) {
  char b;
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return read(fd, &b, 1) == 1;
}

/* Cancelled while idle: a recycle, unless a call was already assigned:
 * then the call is cancelled, and its verdict must say so. */
static wait_result after_cancel(int fd, size_t assigned_bytes, cap_error *err) {
  if (assigned_bytes == 0 && !assignment_waiting(fd)) return WAIT_RECYCLE;
  cap_fail(err, CAP_E_CALL_CANCELLED, "the call was cancelled as its warm cell took it");
  return WAIT_CANCELLED;
}

/* Every way out of a warm cell that ran no call: when the supervisor was
 * cancelled with a call assigned (the cell was still starting, say), that
 * call's verdict is CALL_CANCELLED, whatever else went wrong meanwhile;
 * otherwise `idle` (recycled, or failed while idle). */
static warm_outcome no_call_ran(int assign_fd, warm_outcome idle, cap_error *err) {
  if (cell_cancel_requested && assignment_waiting(assign_fd)) {
    cap_override(err, CAP_E_CALL_CANCELLED, "the call was cancelled as its warm cell took it");
    return WARM_CALL_FAILED;
  }
  return idle;
}

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
  if (cell_cancel_requested) {
    free(buf);
    return after_cancel(fd, len, err);
  }
  if (len == 0 || len > WARM_ASSIGNMENT_MAX) {
    free(buf);
    return WAIT_RECYCLE; /* EOF without a call */
  }
  *assignment = json_loadb(buf, len, 0, NULL);
  free(buf);
  if (!json_is_string(json_object_get(*assignment, "tool")) || !json_object_get(*assignment, "input")) {
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
    if (cell_cancel_requested) return after_cancel(assign_fd, 0, err);
    struct pollfd p[3] = {{assign_fd, POLLIN, 0}, {c->out_fd, POLLIN, 0}, {c->pidfd, POLLIN, 0}};
    /* A cancellation after the check above still ends the wait. */
    int r = cancellable_poll(p, 3, -1, &cell_cancel_requested);
    if (r < 0 && (errno == EINTR || errno == ECANCELED)) continue;
    if (r < 0) {
      cap_fail(err, CAP_E_INTERNAL, "poll: %s", strerror(errno));
      return WAIT_CELL_FAILED;
    }
    if (p[1].revents || p[2].revents) {
      json_t *msg = NULL;
      cap_code rc =
          cell_recv(c, mono_ms() + c->lim->shutdown_timeout_ms, CAP_E_CELL_START_TIMEOUT, &msg, err);
      json_decref(msg);
      if (!rc) cap_fail(err, CAP_E_PROTOCOL_VIOLATION, "warm cell spoke before it was given a call");
      return WAIT_CELL_FAILED;
    }
    if (p[0].revents) return read_assignment(assign_fd, assignment, err);
  }
}

warm_outcome warm_cell_run(host *h, size_t cap_index, int assign_fd, json_t **result, cap_error *err) {
  *result = NULL;
  if (cell_cancel_requested) return no_call_ran(assign_fd, WARM_RECYCLED, err); /* before it started */
  loaded_capsule *cap = &h->caps[cap_index];
  cell c;
  cap_code rc = cell_start_for_capsule(h, &cap->guest, cap, &c, err);
  if (rc) return no_call_ran(assign_fd, WARM_IDLE_FAILED, err);
  rc = cell_expect(&c, "loader.ready", mono_ms() + h->cfg.limits.startup_timeout_ms, CAP_E_CELL_START_TIMEOUT,
                   NULL, err);
  if (!rc) c.loader_ready = true;
  /* Pre-loaded: the guest's top-level code runs now, as in every describe
   * cell at activation; it has no call input until the call is handed over. */
  json_t *described = NULL;
  if (!rc && h->cfg.limits.warm_cell_preload) rc = described_cell_load(&c, &described, err);
  if (!rc && described) rc = call_descriptor_matches(cap, described, err);
  json_t *assignment = NULL;
  wait_result w = rc ? WAIT_CELL_FAILED : wait_for_call(&c, assign_fd, &assignment, err);
  if (w != WAIT_ASSIGNED) {
    json_decref(described);
    /* Recycled or cancelled: a clean shutdown (the pre-loaded guest's, or
     * the loader's when no guest was loaded); a failed cell is only joined. */
    bool clean = w == WAIT_RECYCLE || w == WAIT_CANCELLED;
    if (clean) cell_cancel_requested = 0;
    rc = cell_finish(&c, clean ? CAP_OK : err->code, err);
    if (w == WAIT_CANCELLED) return WARM_CALL_FAILED; /* err: CALL_CANCELLED, first */
    if (w == WAIT_RECYCLE && !rc) return WARM_RECYCLED;
    return no_call_ran(assign_fd, WARM_IDLE_FAILED, err);
  }
  close(assign_fd);
  rc = call_tool_in_warm_cell(h, cap, &c, described, json_string_value(json_object_get(assignment, "tool")),
                              json_object_get(assignment, "input"), result, err);
  json_decref(assignment);
  return rc ? WARM_CALL_FAILED : WARM_CALL_OK;
}
