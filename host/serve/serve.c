/* The serve loop: MCP over stdio with a bounded scheduler. One poll() over
 * stdin, a signalfd, stdout when output is queued, and every supervisor's
 * (and warm cell's) pipe and pidfd; nothing in it waits on a cell. Logs go
 * to stderr; stdout carries protocol only (serve_output.c). The protocol is
 * mcp.c, the scheduler scheduler.c, the warm cells warm_pool.c. */
#include "serve.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "admit/staging.h"
#include "attest/snapshot.h"
#include "call/verdict.h"
#include "clock.h"
#include "host.h"
#include "mcp.h"
#include "safe_text.h"
#include "scheduler.h"
#include "serve_log.h"
#include "serve_output.h"
#include "serve_poll.h"
#include "statement/statement_write.h"
#include "warm_pool.h"

/* Reads more of stdin, only once every byte read before was handled. */
static void read_stdin(server *s) {
  ssize_t n = read(0, s->in, sizeof s->in);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    s->in_eof = true;
    return;
  }
  s->in_len = (size_t)n;
  s->in_off = 0;
}

/* Cuts what was read into lines and handles them, one at a time, until the
 * output queue is above its high-water mark: the rest waits in s->in (and
 * stdin is not read) until the client has taken its answers. */
static void handle_input(server *s) {
  size_t max = (size_t)s->h->cfg.limits.max_frame_bytes;
  while (s->in_off < s->in_len && !serve_output_backlogged(s)) {
    char c = s->in[s->in_off++];
    if (c == '\n') {
      if (!s->discarding)
        mcp_handle_line(s, s->line, s->line_len);
      else
        mcp_refuse_long_line(s);
      s->discarding = false;
      s->line_len = 0;
      continue;
    }
    if (s->discarding) continue;
    if (s->line_len == max) {
      s->discarding = true;
      continue;
    }
    s->line[s->line_len++] = c;
  }
  bool pending = s->in_off < s->in_len;
  /* End of input: shut down once every line read was handled, or when a
   * client that closed its input does not read its answers either. */
  if (s->in_eof && (!pending || mono_ms() - s->out_progress_ms > s->h->cfg.limits.shutdown_timeout_ms)) {
    if (pending)
      fprintf(stderr,
              "capsule-host: %zu bytes of requests left unhandled: the client closed its "
              "input and reads no answers\n",
              s->in_len - s->in_off);
    s->in_off = s->in_len;
    s->shutting_down = true;
  }
}

static void begin_shutdown(server *s) {
  /* Queued calls never start; running ones are cancelled and joined. */
  scheduler_refuse_queued(s);
  if (!s->cancel_sent) {
    scheduler_cancel_running(s);
    /* The job is the host's own: ended, its node and cell die with it. */
    if (s->snapshot_running) syscall(SYS_pidfd_send_signal, s->snapshot_job.pidfd, SIGKILL, NULL, 0);
    warm_pool_recycle_all(s); /* idle cells shut down their loaders and are joined */
  }
  s->cancel_sent = true;
}

/* serve is a subreaper: what a supervisor it SIGKILLed leaves behind (the
 * snapshot job's bwrap and its sandbox, which die of their parent-death
 * signals a moment later) is reparented here and joined before serve says
 * "every cell joined". Waits up to grace_ms, then SIGKILLs what is left of
 * its own children (pids it has not reaped cannot be reused) and reaps them. */
static void join_orphans(long long grace_ms) {
  long long until = mono_ms() + grace_ms;
  for (;;) {
    pid_t r = waitpid(-1, NULL, WNOHANG);
    if (r > 0) continue;
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return; /* ECHILD: no child left */
    if (mono_ms() >= until) {
      DIR *d = opendir("/proc");
      struct dirent *e;
      while (d && (e = readdir(d))) {
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = e->d_name[0] >= '1' && e->d_name[0] <= '9' ? fopen(path, "re") : NULL;
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f) fclose(f);
        buf[n] = '\0';
        const char *close_paren = strrchr(buf, ')');
        int ppid = 0;
        if (close_paren && sscanf(close_paren + 1, " %*c %d", &ppid) == 1 && ppid == getpid())
          kill((pid_t)atoi(e->d_name), SIGKILL);
      }
      if (d) closedir(d);
      until = mono_ms() + 1000000;
    }
    poll(NULL, 0, 5);
  }
}

/* A child serve tracks (a call's or warm cell's supervisor, the snapshot
 * job) is joined by its own finish, which waits for it by pid. */
static bool tracked_child(const server *s, pid_t pid) {
  for (size_t i = 0; i < s->running; i++)
    if (s->slots[i].sup.pid == pid) return true;
  for (size_t i = 0; i < s->warm_count; i++)
    if (s->warm[i].sup.pid == pid) return true;
  return s->snapshot_running && s->snapshot_job.pid == pid;
}

/* As a subreaper (join_orphans), serve adopts every cell's outer bwrap,
 * which outlives its supervisor by a moment. Each is reaped as it exits
 * (SIGCHLD wakes the loop), so a serve that runs for days keeps no zombie,
 * and no pid, per call. A tracked child is never reaped here: its status
 * is its finish's, and its pid must not be reused before that finish. The
 * peek stops at the first tracked zombie; its pidfd is readable, so the
 * next round finishes it and reaps what lies behind it. */
static void reap_adopted(const server *s) {
  for (;;) {
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid == 0) return;
    if (tracked_child(s, si.si_pid)) return;
    if (waitpid(si.si_pid, NULL, WNOHANG) != si.si_pid) return;
  }
}

static const call_runner supervisor_runner = {supervisor_start, supervisor_cancel, supervisor_start_warm,
                                              supervisor_start_snapshot};

/* The snapshot job starts with the loop; calls and warm cells meanwhile run
 * without the snapshot (slower, same boundary). */
static void start_snapshot_job(server *s) {
  cap_error err = {0};
  host *h = s->h;
  if (!s->runner->start_snapshot) return;
  if (staging_reserve(&h->stg, SNAPSHOT_BUILDING_NAME, &err) ||
      staging_reserve(&h->stg, SNAPSHOT_NAME, &err) || s->runner->start_snapshot(h, &s->snapshot_job, &err)) {
    fprintf(stderr, "capsule-host: startup snapshot unavailable: %s: %s\n", cap_code_name(err.code),
            err.message);
    return;
  }
  json_object_set_new(h->attestation, "startupSnapshot", json_pack("{s:s}", "state", "building"));
  s->snapshot_running = true;
}

/* With --statement, the world statement written at activation said the
 * snapshot was building; it is written again saying what became of it
 * (whole files, renamed into place). A failure is logged, not fatal: the
 * cells are what they were, only their record is stale. */
static void restate_the_world(host *h) {
  cap_error err = {0};
  if (!h->statement_dir) return;
  if (statement_write(h, CAP_OK, NULL, &err))
    fprintf(stderr, "capsule-host: the world was NOT restated after the snapshot: %s: %s\n",
            cap_code_name(err.code), err.message);
  else
    fprintf(stderr, "capsule-host: world restated after the snapshot\n");
}

static void finish_snapshot_job(server *s) {
  supervisor_drain(&s->snapshot_job, supervisor_verdict_max(&s->h->cfg.limits));
  json_t *verdict = supervisor_verdict(&s->snapshot_job);
  supervisor_finish(&s->snapshot_job);
  s->snapshot_running = false;
  cap_error err = {0};
  if (s->shutting_down) {
    json_decref(verdict);
    return;
  }
  verdict_reading v;
  verdict_read(verdict, VERDICT_SNAPSHOT, &v);
  snapshot_outcome job = {v.code, v.message, v.payload};
  if (snapshot_adopt(s->h, &job, &err))
    fprintf(stderr, "capsule-host: startup snapshot unavailable (cells run without it): %s: %s\n",
            cap_code_name(err.code), err.message);
  else
    fprintf(stderr, "capsule-host: startup snapshot in use (%s)\n", s->h->snapshot.sha256);
  json_decref(verdict);
  restate_the_world(s->h);
}

/* SIGTERM, SIGINT and SIGHUP end serve, SIGCHLD wakes reap_adopted: all
 * read from a signalfd (returned, -1 on failure) by the poll loop. */
static int serve_signalfd(void) {
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGHUP);
  sigaddset(&mask, SIGCHLD);
  sigprocmask(SIG_BLOCK, &mask, NULL);
  return signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* One poll over stdin, the signals, stdout, each running call's
 * supervisor, the warm cells, the snapshot job and the log, then what each
 * readiness asks. false: poll failed, serve ends. */
static bool serve_poll_once(server *s, int sfd, int timeout, bool want_input) {
  size_t max = supervisor_verdict_max(&s->h->cfg.limits);
  serve_poll_set p;
  if (!serve_poll_set_open(&p, s->running, s->warm_count)) return false;
  serve_poll_watch(&p, SERVE_POLL_STDIN, want_input ? 0 : -1, POLLIN);
  serve_poll_watch(&p, SERVE_POLL_SIGNALS, sfd, POLLIN);
  serve_poll_watch(&p, SERVE_POLL_STDOUT, s->out_len ? 1 : -1, POLLOUT);
  serve_poll_watch(&p, SERVE_POLL_SNAPSHOT_RESULT, s->snapshot_running ? s->snapshot_job.result_fd : -1,
                   POLLIN);
  serve_poll_watch(&p, SERVE_POLL_SNAPSHOT_EXIT, s->snapshot_running ? s->snapshot_job.pidfd : -1, POLLIN);
  serve_poll_watch(&p, SERVE_POLL_LOG, serve_log_pollfd(), POLLOUT);
  for (size_t i = 0; i < s->running; i++) serve_poll_watch_call(&p, i, &s->slots[i].sup);
  warm_pool_watch(s, &p);
  if (!serve_poll_wait(&p, timeout)) {
    serve_poll_set_close(&p);
    return false;
  }
  if (serve_poll_ready(&p, SERVE_POLL_SIGNALS)) {
    struct signalfd_siginfo si;
    while (read(sfd, &si, sizeof si) == sizeof si)
      if (si.ssi_signo != SIGCHLD) s->shutting_down = true;
  }
  if (serve_poll_ready(&p, SERVE_POLL_SNAPSHOT_RESULT)) supervisor_read(&s->snapshot_job, max);
  if (serve_poll_ready(&p, SERVE_POLL_SNAPSHOT_EXIT)) finish_snapshot_job(s);
  /* Warm cells first: a finished call below may take one, shifting them. */
  warm_pool_reap(s, &p);
  /* Finished supervisors next (from the end, as finishing shifts slots). */
  for (size_t i = s->running; i-- > 0;) {
    serve_poll_supervisor ready = serve_poll_call(&p, i);
    if (ready.readable) supervisor_read(&s->slots[i].sup, max);
    if (ready.exited) {
      supervisor_drain(&s->slots[i].sup, max);
      scheduler_finish(s, i);
    }
  }
  reap_adopted(s);
  if (serve_poll_ready(&p, SERVE_POLL_LOG)) serve_log_flush();
  if (serve_poll_ready(&p, SERVE_POLL_STDIN)) read_stdin(s);
  serve_poll_set_close(&p);
  return true;
}

/* Answers still buffered get shutdownTimeoutMs to leave; a client that
 * does not read them cannot hold the host. */
static void serve_drain_output(server *s) {
  long long until = mono_ms() + s->h->cfg.limits.shutdown_timeout_ms;
  for (serve_output_flush(s); s->out_len && !s->out_broken && mono_ms() < until; serve_output_flush(s)) {
    struct pollfd w = {1, POLLOUT, 0};
    poll(&w, 1, (int)(until - mono_ms() > 0 ? until - mono_ms() : 0));
  }
}

int serve_run(host *h) {
  server s;
  memset(&s, 0, sizeof s);
  s.h = h;
  s.runner = &supervisor_runner;
  s.events = &mcp_events;
  s.registry = host_registry(h);
  s.line = malloc((size_t)h->cfg.limits.max_frame_bytes + 1);
  int sfd = serve_signalfd();
  if (!s.line || sfd < 0) return 1;
  fcntl(1, F_SETFL, fcntl(1, F_GETFL) | O_NONBLOCK);
  serve_log_open();                 /* before the first line: an unread stderr never stalls the loop */
  prctl(PR_SET_CHILD_SUBREAPER, 1); /* join_orphans */
  start_snapshot_job(&s);
  size_t tools = json_array_size(json_object_get(s.registry, "tools")),
         sections = json_array_size(json_object_get(s.registry, "promptSections"));
  fprintf(stderr, "capsule-host: serving %zu tool%s and %zu prompt section%s\n", tools, tools == 1 ? "" : "s",
          sections, sections == 1 ? "" : "s");
  for (;;) {
    serve_output_flush(&s);
    if (s.out_len == 0) s.out_progress_ms = mono_ms();
    if (!s.shutting_down) handle_input(&s);
    if (s.shutting_down) begin_shutdown(&s);
    if (s.shutting_down && s.running == 0 && s.warm_count == 0 && !s.snapshot_running) break;
    warm_pool_fill(&s);
    int timeout = scheduler_expire(&s), warm_due = warm_pool_expire(&s);
    if (warm_due >= 0 && (timeout < 0 || warm_due < timeout)) timeout = warm_due;
    serve_output_flush(&s);
    bool want_input = !s.shutting_down && !serve_output_backlogged(&s) && !s.in_eof && s.in_off == s.in_len;
    /* Input still to handle once the client reads: wake to check again. */
    if (s.in_off < s.in_len && (timeout < 0 || timeout > 100)) timeout = 100;
    if (!serve_poll_once(&s, sfd, timeout, want_input)) break;
  }
  serve_drain_output(&s);
  join_orphans(h->cfg.limits.process_grace_ms);
  close(sfd);
  free(s.out);
  free(s.line);
  free(s.slots);
  warm_pool_free(&s);
  json_decref(s.registry);
  fprintf(stderr, "capsule-host: serve stopped, every cell joined\n");
  serve_log_close(mono_ms() + h->cfg.limits.shutdown_timeout_ms);
  return 0;
}
