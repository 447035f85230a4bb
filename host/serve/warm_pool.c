/* The serve loop's warm cells: per capsule up to warmCellsPerCapsule cells
 * started ahead of a call, each in its own supervisor (warm_cell.c) whose
 * loader waits for "load". A call takes the oldest idle one of its
 * capsule; the pool starts a replacement on the next loop round. Warm
 * cells are not calls: a cell counts against maxConcurrentCalls from the
 * moment a call takes it. */
#include "warm_pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admit/capsule.h"
#include "call/verdict.h"
#include "clock.h"
#include "host_state.h"
#include "serve_output.h"

/* After a warm cell fails while idle, its capsule waits this long before
 * the next one: a capsule whose cells cannot start does not spin. */
#define WARM_RETRY_MS 1000

static size_t idle_of(const server *s, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < s->warm_count; i++)
    if (s->warm[i].cap_index == cap && !s->warm[i].retiring) n++;
  return n;
}

void warm_pool_fill(server *s) {
  if (!s->runner->start_warm || s->shutting_down) return;
  size_t want = (size_t)s->h->cfg.limits.warm_cells_per_capsule;
  if (!s->warm_retry_ms && !(s->warm_retry_ms = calloc(s->h->cap_count + 1, sizeof *s->warm_retry_ms)))
    return;
  long long now = mono_ms();
  for (size_t cap = 0; cap < s->h->cap_count; cap++) {
    if (now < s->warm_retry_ms[cap]) continue;
    for (size_t have = idle_of(s, cap); have < want; have++) {
      if (s->warm_count == s->warm_alloc) {
        size_t n = s->warm_alloc ? 2 * s->warm_alloc : 8;
        warm_slot *p = realloc(s->warm, n * sizeof *p);
        if (!p) return;
        s->warm = p;
        s->warm_alloc = n;
      }
      warm_slot *w = &s->warm[s->warm_count];
      cap_error err = {0};
      if (s->runner->start_warm(s->h, cap, &w->sup, &err) != CAP_OK) {
        fprintf(stderr, "capsule-host: cannot start a warm cell: %s: %s\n", cap_code_name(err.code),
                err.message);
        s->warm_retry_ms[cap] = now + WARM_RETRY_MS;
        break;
      }
      w->cap_index = cap;
      w->started_ms = now;
      w->retiring = false;
      s->warm_count++;
    }
  }
}

bool warm_pool_take(server *s, size_t cap_index, const char *tool, const json_t *input,
                    call_supervisor *out) {
  for (size_t i = 0; i < s->warm_count; i++) {
    warm_slot *w = &s->warm[i];
    if (w->cap_index != cap_index || w->retiring) continue;
    if (!supervisor_assign(&w->sup, tool, input)) return false;
    *out = w->sup;
    memmove(w, w + 1, (s->warm_count - i - 1) * sizeof *w);
    s->warm_count--;
    return true;
  }
  return false;
}

void warm_pool_watch(const server *s, serve_poll_set *p) {
  for (size_t i = 0; i < s->warm_count; i++) serve_poll_watch_warm(p, i, &s->warm[i].sup);
}

/* A warm supervisor that exited without a call: recycled, or its cell
 * failed while idle (logged; the capsule waits WARM_RETRY_MS). */
static void reap_one(server *s, size_t i) {
  warm_slot *w = &s->warm[i];
  json_t *job = supervisor_verdict(&w->sup);
  supervisor_finish(&w->sup);
  verdict_reading v;
  if (verdict_read(job, VERDICT_RECYCLED, &v)) {
    fprintf(stderr, "capsule-host: warm cell of %s failed while idle: %s: %s\n",
            s->h->caps[w->cap_index].m.id, cap_code_name(v.code), v.message);
    s->warm_retry_ms[w->cap_index] = mono_ms() + WARM_RETRY_MS;
  }
  json_decref(job);
  memmove(w, w + 1, (s->warm_count - i - 1) * sizeof *w);
  s->warm_count--;
}

void warm_pool_reap(server *s, const serve_poll_set *p) {
  size_t max = supervisor_verdict_max(&s->h->cfg.limits);
  for (size_t i = s->warm_count; i-- > 0;) {
    serve_poll_supervisor ready = serve_poll_warm(p, i);
    if (ready.readable) supervisor_read(&s->warm[i].sup, max);
    if (!ready.exited) continue;
    supervisor_drain(&s->warm[i].sup, max);
    reap_one(s, i);
  }
}

int warm_pool_expire(server *s) {
  long long now = mono_ms(), max_idle = s->h->cfg.limits.warm_cell_max_idle_ms, next = -1;
  for (size_t i = 0; i < s->warm_count; i++) {
    warm_slot *w = &s->warm[i];
    if (w->retiring) continue;
    long long left = w->started_ms + max_idle - now;
    if (left <= 0) {
      supervisor_recycle(&w->sup);
      w->retiring = true;
    } else if (next < 0 || left < next) {
      next = left;
    }
  }
  /* A capsule waiting out WARM_RETRY_MS is refilled when it ends. */
  for (size_t cap = 0; s->warm_retry_ms && cap < s->h->cap_count; cap++) {
    long long left = s->warm_retry_ms[cap] - now;
    if (left > 0 && (next < 0 || left < next)) next = left;
  }
  return next < 0 ? -1 : next > 1000000 ? 1000000 : (int)next;
}

void warm_pool_recycle_all(server *s) {
  for (size_t i = 0; i < s->warm_count; i++) {
    supervisor_recycle(&s->warm[i].sup);
    s->warm[i].retiring = true;
  }
}

void warm_pool_note_failed_before_call(server *s, size_t cap_index, cap_code code, const char *message) {
  fprintf(stderr, "capsule-host: warm cell of %s failed while idle: %s: %s (its call runs in a fresh cell)\n",
          s->h->caps[cap_index].m.id, cap_code_name(code), message);
  if (s->warm_retry_ms) s->warm_retry_ms[cap_index] = mono_ms() + WARM_RETRY_MS;
}

void warm_pool_free(server *s) {
  free(s->warm);
  free(s->warm_retry_ms);
  s->warm = NULL;
  s->warm_retry_ms = NULL;
}
