/* serve's scheduler: at most maxConcurrentCalls calls run, each in its
 * own supervisor (or a warm cell), at most maxQueuedCalls wait, in arrival
 * order, for at most queueTimeoutMs. It decides; what the client is told
 * is the protocol's (s->events). */
#include "scheduler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call/verdict.h"
#include "clock.h"
#include "host_state.h"
#include "serve_log.h"
#include "serve_output.h"
#include "warm_pool.h"

/* Forgets slot i (its request is answered or dropped). */
static void drop_slot(server *s, size_t i) {
  call_slot *c = &s->slots[i];
  json_decref(c->id);
  json_decref(c->input);
  json_decref(c->progress_token);
  free(c->tool);
  memmove(c, c + 1, (s->count - i - 1) * sizeof *c);
  s->count--;
}

/* The call is not run: logged and reported, its slot (if any) forgotten. */
static void refuse(server *s, const json_t *id, const char *tool, long long since_ms, const char *how,
                   const cap_error *why) {
  serve_log_call(tool, cap_code_name(why->code), since_ms, how);
  s->events->refused(s, id, why);
}

static void start_next(server *s) {
  if (s->shutting_down) return; /* queued calls are refused by scheduler_refuse_queued */
  while (s->running < (size_t)s->h->cfg.limits.max_concurrent_calls && s->running < s->count) {
    call_slot *c = &s->slots[s->running];
    cap_error err = {0};
    c->started_ms = mono_ms();
    c->warm = warm_pool_take(s, c->cap_index, c->tool, c->input, &c->sup);
    if (!c->warm && s->runner->start(s->h, c->tool, c->input, &c->sup, &err) != CAP_OK) {
      refuse(s, c->id, c->tool, c->arrived_ms, "not started", &err);
      drop_slot(s, s->running);
      continue;
    }
    c->running = true;
    s->running++;
    s->events->started(s, c);
  }
}

/* A cancelled call is finished for the client (the spec lets it reuse the
 * id at once) although its cell may still be joining: it does not count. */
bool scheduler_in_flight(const server *s, const json_t *id) {
  for (size_t i = 0; i < s->count; i++)
    if (!s->slots[i].cancelled && json_equal(s->slots[i].id, id)) return true;
  return false;
}

void scheduler_admit(server *s, const json_t *id, const char *name, size_t cap_index, const json_t *args,
                     const call_origin *origin) {
  cap_error err = {0};
  size_t queued = s->count - s->running;
  bool can_run = s->running < (size_t)s->h->cfg.limits.max_concurrent_calls;
  if (s->shutting_down) {
    cap_fail(&err, CAP_E_BUSY, "shutting down");
    return refuse(s, id, name, 0, "refused", &err);
  }
  if (!can_run && queued >= (size_t)s->h->cfg.limits.max_queued_calls) {
    cap_fail(&err, CAP_E_BUSY,
             "%zu calls running and %zu queued (maxConcurrentCalls %lld, "
             "maxQueuedCalls %lld); retry later",
             s->running, queued, s->h->cfg.limits.max_concurrent_calls, s->h->cfg.limits.max_queued_calls);
    return refuse(s, id, name, 0, "refused", &err);
  }
  if (s->count == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 16;
    call_slot *p = realloc(s->slots, cap * sizeof *p);
    if (!p) {
      cap_fail(&err, CAP_E_INTERNAL, "out of memory");
      return refuse(s, id, name, 0, "refused", &err);
    }
    s->slots = p;
    s->cap = cap;
  }
  call_slot *c = &s->slots[s->count++];
  memset(c, 0, sizeof *c);
  c->id = json_deep_copy(id);
  c->arrived_ms = mono_ms();
  c->tool = strdup(name);
  c->cap_index = cap_index;
  c->input = args ? json_deep_copy(args) : json_object();
  c->progress_token = origin->progress_token ? json_deep_copy(origin->progress_token) : NULL;
  c->modern = origin->modern;
  start_next(s);
}

void scheduler_cancel(server *s, const json_t *rid) {
  for (size_t i = 0; rid && i < s->count; i++) {
    call_slot *c = &s->slots[i];
    if (!json_equal(c->id, rid) || c->cancelled) continue;
    c->cancelled = true; /* the spec: no response for a cancelled request */
    if (c->running) {
      s->runner->cancel(&c->sup); /* its verdict's code is logged when it ends */
    } else {
      serve_log_call(c->tool, "CALL_CANCELLED", c->arrived_ms, "queued");
      drop_slot(s, i);
    }
    fprintf(stderr, "capsule-host: cancelled request\n");
    return;
  }
}

void scheduler_finish(server *s, size_t i) {
  call_slot *c = &s->slots[i];
  json_t *job = supervisor_verdict(&c->sup);
  supervisor_finish(&c->sup);
  verdict_reading v;
  cap_code code = verdict_read(job, VERDICT_RESULT, &v);
  if (code && v.idle && c->warm && !c->cancelled && !s->shutting_down) {
    /* The warm cell failed before its guest was given the call: the idle
     * cell's failure, not the call's; the call starts again, fresh. */
    warm_pool_note_failed_before_call(s, c->cap_index, code, v.message);
    json_decref(job);
    cap_error err = {0};
    c->warm = false;
    if (s->runner->start(s->h, c->tool, c->input, &c->sup, &err) == CAP_OK) return;
    refuse(s, c->id, c->tool, c->arrived_ms, "not started", &err);
    drop_slot(s, i);
    s->running--;
    start_next(s);
    return;
  }
  /* A cancel that met the call after its cell had answered (while the cell
   * was joined) still cancels it: no answer goes out, so the log says
   * CALL_CANCELLED, and what the cell had come to. */
  const char *ended = code ? cap_code_name(code) : "ok";
  bool late = c->cancelled && code != CAP_E_CALL_CANCELLED;
  char how[96];
  snprintf(how, sizeof how, "%s%s%s", c->warm ? "warm cell" : "fresh cell",
           late ? ", cancelled after it ended " : "", late ? ended : "");
  serve_log_call(c->tool, c->cancelled ? "CALL_CANCELLED" : ended, c->started_ms, how);
  if (!c->cancelled) s->events->finished(s, c, &v);
  json_decref(job);
  drop_slot(s, i);
  s->running--;
  start_next(s);
}

int scheduler_expire(server *s) {
  long long now = mono_ms(), wait = s->h->cfg.limits.queue_timeout_ms, next = -1;
  for (size_t i = s->running; i < s->count;) {
    call_slot *c = &s->slots[i];
    long long left = c->arrived_ms + wait - now;
    if (left > 0) {
      if (next < 0 || left < next) next = left;
      i++;
      continue;
    }
    cap_error err = {0};
    cap_fail(&err, CAP_E_QUEUE_TIMEOUT,
             "no cell became free within queueTimeoutMs %lld "
             "(maxConcurrentCalls %lld)",
             wait, s->h->cfg.limits.max_concurrent_calls);
    refuse(s, c->id, c->tool, c->arrived_ms, "queued", &err);
    drop_slot(s, i);
  }
  return next < 0 ? -1 : next > 1000000 ? 1000000 : (int)next;
}

void scheduler_refuse_queued(server *s) {
  /* Queued calls never start. */
  while (s->count > s->running) {
    call_slot *c = &s->slots[s->running];
    if (!c->cancelled) {
      cap_error err = {0};
      cap_fail(&err, CAP_E_CALL_CANCELLED, "shutting down");
      refuse(s, c->id, c->tool, c->arrived_ms, "queued", &err);
    }
    drop_slot(s, s->running);
  }
}

void scheduler_cancel_running(server *s) {
  for (size_t i = 0; i < s->running; i++) s->runner->cancel(&s->slots[i].sup);
}
