/* The serve loop: MCP over stdio with a bounded scheduler. One poll() over
 * stdin, a signalfd and every supervisor's pipe and pidfd; nothing in it
 * waits on a cell. Logs go to stderr; stdout carries protocol only. */
#include "serve.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "call_supervisor.h"
#include "safe_open.h"
#include "strict_json.h"
#include "version.h"
#include "clock.h"

#define JSONRPC_PARSE_ERROR -32700
#define JSONRPC_INVALID_REQUEST -32600
#define JSONRPC_METHOD_NOT_FOUND -32601
#define JSONRPC_INVALID_PARAMS -32602
#define JSONRPC_SERVER_BUSY -32001
#define JSONRPC_NOT_INITIALIZED -32002

static const char *const protocol_versions[] = {"2025-06-18", "2025-03-26", "2024-11-05", NULL};

typedef struct {
  json_t *id;
  char *tool;
  json_t *input;
  long long arrived_ms, started_ms;
  bool running, cancelled;
  call_supervisor sup;
} call_slot;

typedef struct {
  host *h;
  json_t *registry;
  call_slot *slots; /* running first, then queued, in arrival order */
  size_t count, cap;
  size_t running;
  bool initialized, shutting_down, cancel_sent;
  char *line;
  size_t line_len;
  bool discarding; /* inside an over-long line */
  /* Outbound bytes not yet accepted by stdout (non-blocking): a stalled
   * client never blocks the loop, and stdin is not read while this is above
   * the high-water mark, so it holds at most that plus the answers of calls
   * already admitted. */
  char *out;
  size_t out_len, out_cap;
  bool out_broken; /* stdout closed or failed: answers are dropped */
} server;

/* The one server, for send_message (the loop is single-threaded). */
static server *the_server;

/* Forgets slot i (its request is answered or dropped). */
static void drop_slot(server *s, size_t i) {
  call_slot *c = &s->slots[i];
  json_decref(c->id);
  json_decref(c->input);
  free(c->tool);
  memmove(c, c + 1, (s->count - i - 1) * sizeof *c);
  s->count--;
}

static size_t out_high_water(const server *s) {
  return 4 * (size_t)s->h->cfg.limits.max_frame_bytes;
}

static void send_message(json_t *msg) {
  server *s = the_server;
  char *text = json_dumps(msg, JSON_COMPACT);
  json_decref(msg);
  if (!text) return;
  size_t n = strlen(text);
  if (!s->out_broken && s->out_len + n + 1 > s->out_cap) {
    size_t cap = s->out_cap ? s->out_cap : 65536;
    while (cap < s->out_len + n + 1) cap *= 2;
    char *p = realloc(s->out, cap);
    if (!p) s->out_broken = true; /* cannot buffer: the client is gone for us */
    else s->out = p, s->out_cap = cap;
  }
  if (!s->out_broken) {
    memcpy(s->out + s->out_len, text, n);
    s->out[s->out_len + n] = '\n';
    s->out_len += n + 1;
  }
  free(text);
}

/* Writes what stdout accepts now; never blocks. */
static void flush_out(server *s) {
  if (s->out_len == 0) return;
  size_t off = 0;
  while (!s->out_broken && off < s->out_len) {
    ssize_t n = write(1, s->out + off, s->out_len - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    if (n <= 0) {
      s->out_broken = true; /* EPIPE: the client left; shutdown follows from stdin */
      break;
    }
    off += (size_t)n;
  }
  if (s->out_broken) off = s->out_len;
  memmove(s->out, s->out + off, s->out_len - off);
  s->out_len -= off;
}

static void send_result(const json_t *id, json_t *result) {
  send_message(json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result", result));
}

static void send_error(const json_t *id, int code, const char *message, const char *cap) {
  json_t *e = json_pack("{s:i,s:s}", "code", code, "message", message);
  if (cap) json_object_set_new(e, "data", json_pack("{s:s}", "code", cap));
  send_message(json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(),
                         "error", e));
}

static json_t *tool_entry(const json_t *t) {
  return json_pack("{s:O,s:O,s:O}", "name", json_object_get(t, "name"), "description",
                   json_object_get(t, "description"), "inputSchema",
                   json_object_get(t, "inputSchema"));
}

static char *instructions(const server *s) {
  size_t i;
  json_t *sec;
  size_t cap = 1;
  json_array_foreach(json_object_get(s->registry, "promptSections"), i, sec) cap +=
      strlen(json_string_value(json_object_get(sec, "text"))) +
      strlen(json_string_value(json_object_get(sec, "id"))) + 8;
  char *out = calloc(1, cap);
  if (!out) return NULL;
  json_array_foreach(json_object_get(s->registry, "promptSections"), i, sec) {
    strcat(out, "## ");
    strcat(out, json_string_value(json_object_get(sec, "id")));
    strcat(out, "\n");
    strcat(out, json_string_value(json_object_get(sec, "text")));
    strcat(out, "\n\n");
  }
  return out;
}

static void handle_initialize(server *s, const json_t *id, const json_t *params) {
  const char *wanted = json_string_value(json_object_get(params, "protocolVersion"));
  const char *chosen = protocol_versions[0];
  for (const char *const *v = protocol_versions; wanted && *v; v++)
    if (strcmp(*v, wanted) == 0) chosen = *v;
  char *text = instructions(s);
  json_t *result = json_pack("{s:s,s:{s:{s:b},s:{s:b}},s:{s:s,s:s},s:s}", "protocolVersion",
                             chosen, "capabilities", "tools", "listChanged", 0, "prompts",
                             "listChanged", 0, "serverInfo", "name", "dsh-capsule", "version",
                             CAPSULE_VERSION, "instructions", text ? text : "");
  free(text);
  s->initialized = true;
  send_result(id, result);
}

static void start_next(server *s) {
  if (s->shutting_down) return; /* queued calls are answered by begin_shutdown */
  while (s->running < (size_t)s->h->cfg.limits.max_concurrent_calls && s->running < s->count) {
    call_slot *c = &s->slots[s->running];
    cap_error err = {0};
    c->started_ms = mono_ms();
    if (supervisor_start(s->h, c->tool, c->input, &c->sup, &err) != CAP_OK) {
      char msg[700];
      snprintf(msg, sizeof msg, "%s: %s", cap_code_name(err.code), err.message);
      send_error(c->id, JSONRPC_SERVER_BUSY, msg, cap_code_name(err.code));
      drop_slot(s, s->running);
      continue;
    }
    c->running = true;
    s->running++;
  }
}

static void handle_call(server *s, const json_t *id, const json_t *params) {
  const char *name = json_string_value(json_object_get(params, "name"));
  json_t *args = json_object_get(params, "arguments");
  if (!name || (args && !json_is_object(args)))
    return send_error(id, JSONRPC_INVALID_PARAMS, "tools/call needs a name and object arguments",
                      NULL);
  if (!host_find_tool(s->h, name, NULL)) {
    char msg[160];
    snprintf(msg, sizeof msg, "Unknown tool: %.100s", name);
    return send_error(id, JSONRPC_INVALID_PARAMS, msg, "TOOL_NOT_FOUND");
  }
  size_t queued = s->count - s->running;
  bool can_run = s->running < (size_t)s->h->cfg.limits.max_concurrent_calls;
  if (!can_run && queued >= (size_t)s->h->cfg.limits.max_queued_calls) {
    char msg[200];
    snprintf(msg, sizeof msg, "BUSY: %zu calls running and %zu queued (maxConcurrentCalls %lld, "
             "maxQueuedCalls %lld); retry later", s->running, queued,
             s->h->cfg.limits.max_concurrent_calls, s->h->cfg.limits.max_queued_calls);
    return send_error(id, JSONRPC_SERVER_BUSY, msg, "BUSY");
  }
  if (s->count == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 16;
    call_slot *p = realloc(s->slots, cap * sizeof *p);
    if (!p) return send_error(id, JSONRPC_SERVER_BUSY, "out of memory", "INTERNAL");
    s->slots = p;
    s->cap = cap;
  }
  call_slot *c = &s->slots[s->count++];
  memset(c, 0, sizeof *c);
  c->id = json_deep_copy(id);
  c->arrived_ms = mono_ms();
  c->tool = strdup(name);
  c->input = args ? json_deep_copy(args) : json_object();
  start_next(s);
}

static void handle_cancelled(server *s, const json_t *params) {
  json_t *rid = json_object_get(params, "requestId");
  for (size_t i = 0; rid && i < s->count; i++) {
    call_slot *c = &s->slots[i];
    if (!json_equal(c->id, rid) || c->cancelled) continue;
    c->cancelled = true; /* the spec: no response for a cancelled request */
    if (c->running)
      supervisor_cancel(&c->sup);
    else
      drop_slot(s, i);
    fprintf(stderr, "capsule-host: cancelled request\n");
    return;
  }
}

static void handle_prompts_get(server *s, const json_t *id, const json_t *params) {
  const char *name = json_string_value(json_object_get(params, "name"));
  size_t i;
  json_t *sec;
  json_array_foreach(json_object_get(s->registry, "promptSections"), i, sec) {
    if (name && strcmp(json_string_value(json_object_get(sec, "id")), name) == 0) {
      char desc[300];
      snprintf(desc, sizeof desc, "Static system-prompt section from capsule %s",
               json_string_value(json_object_get(sec, "capsuleId")));
      return send_result(id, json_pack("{s:s,s:[{s:s,s:{s:s,s:O}}]}", "description", desc,
                                       "messages", "role", "user", "content", "type", "text",
                                       "text", json_object_get(sec, "text")));
    }
  }
  send_error(id, JSONRPC_INVALID_PARAMS, "Unknown prompt", NULL);
}

static void handle_message(server *s, json_t *msg) {
  if (!json_is_object(msg))
    return send_error(NULL, JSONRPC_INVALID_REQUEST, "expected one JSON-RPC object per line", NULL);
  const char *method = json_string_value(json_object_get(msg, "method"));
  json_t *id = json_object_get(msg, "id");
  json_t *params = json_object_get(msg, "params");
  const char *version = json_string_value(json_object_get(msg, "jsonrpc"));
  if (!version || strcmp(version, "2.0") != 0)
    return send_error(id, JSONRPC_INVALID_REQUEST, "jsonrpc must be \"2.0\"", NULL);
  if (!method) return; /* a response from the client: nothing was asked */
  if (!id) {
    if (strcmp(method, "notifications/cancelled") == 0) handle_cancelled(s, params);
    return; /* notifications/initialized and others need no answer */
  }
  if (!json_is_string(id) && !json_is_integer(id))
    return send_error(NULL, JSONRPC_INVALID_REQUEST, "id must be a string or an integer", NULL);
  if (strcmp(method, "initialize") == 0) return handle_initialize(s, id, params);
  if (strcmp(method, "ping") == 0) return send_result(id, json_object());
  if (!s->initialized)
    return send_error(id, JSONRPC_NOT_INITIALIZED, "initialize first", NULL);
  if (strcmp(method, "tools/list") == 0) {
    json_t *tools = json_array(), *t;
    size_t i;
    json_array_foreach(json_object_get(s->registry, "tools"), i, t)
        json_array_append_new(tools, tool_entry(t));
    return send_result(id, json_pack("{s:o}", "tools", tools));
  }
  if (strcmp(method, "tools/call") == 0) {
    if (s->shutting_down)
      return send_error(id, JSONRPC_SERVER_BUSY, "BUSY: shutting down", "BUSY");
    return handle_call(s, id, params);
  }
  if (strcmp(method, "prompts/list") == 0) {
    json_t *prompts = json_array(), *sec;
    size_t i;
    json_array_foreach(json_object_get(s->registry, "promptSections"), i, sec)
        json_array_append_new(prompts,
                              json_pack("{s:O,s:s}", "name", json_object_get(sec, "id"),
                                        "description", "Static system-prompt section"));
    return send_result(id, json_pack("{s:o}", "prompts", prompts));
  }
  if (strcmp(method, "prompts/get") == 0) return handle_prompts_get(s, id, params);
  send_error(id, JSONRPC_METHOD_NOT_FOUND, "Method not found", NULL);
}

static void handle_line(server *s, const char *line, size_t len) {
  if (len == 0) return;
  const host_limits *l = &s->h->cfg.limits;
  sj_limits lim = {(size_t)l->max_json_depth + 4, (size_t)l->max_json_nodes + 64};
  cap_error err = {0};
  json_t *msg = sj_parse(line, len, &lim, CAP_E_FRAME_INVALID_JSON, "JSON-RPC message", &err);
  if (!msg) return send_error(NULL, JSONRPC_PARSE_ERROR, err.message, cap_code_name(err.code));
  handle_message(s, msg);
  json_decref(msg);
}

static void read_stdin(server *s) {
  char buf[65536];
  ssize_t n = read(0, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    s->shutting_down = true;
    return;
  }
  size_t max = (size_t)s->h->cfg.limits.max_frame_bytes;
  for (ssize_t i = 0; i < n; i++) {
    if (buf[i] == '\n') {
      if (!s->discarding) handle_line(s, s->line, s->line_len);
      else send_error(NULL, JSONRPC_PARSE_ERROR, "message longer than maxFrameBytes", "FRAME_TOO_LARGE");
      s->discarding = false;
      s->line_len = 0;
      continue;
    }
    if (s->discarding) continue;
    if (s->line_len == max) {
      s->discarding = true;
      continue;
    }
    s->line[s->line_len++] = buf[i];
  }
}

static json_t *call_result(json_t *verdict) {
  if (json_is_true(json_object_get(verdict, "ok"))) {
    json_t *r = json_object_get(verdict, "result");
    if (json_is_true(json_object_get(r, "isError")))
      return json_pack("{s:[{s:s,s:O}],s:b}", "content", "type", "text", "text",
                       json_object_get(r, "message"), "isError", 1);
    json_t *out = json_object_get(r, "output");
    char *text = json_dumps(out, JSON_COMPACT | JSON_ENCODE_ANY);
    json_t *res = json_pack("{s:[{s:s,s:s}],s:b}", "content", "type", "text", "text",
                            text ? text : "null", "isError", 0);
    free(text);
    if (json_is_object(out)) json_object_set(res, "structuredContent", out);
    return res;
  }
  json_t *e = json_object_get(verdict, "error");
  char msg[900];
  snprintf(msg, sizeof msg, "%s: %s", json_string_value(json_object_get(e, "code")),
           json_string_value(json_object_get(e, "message")));
  return json_pack("{s:[{s:s,s:s}],s:b,s:{s:O}}", "content", "type", "text", "text", msg,
                   "isError", 1, "_meta", "dsh-capsule/error", e);
}

static void finish_call(server *s, size_t i) {
  call_slot *c = &s->slots[i];
  json_t *verdict = supervisor_verdict(&c->sup);
  supervisor_finish(&c->sup);
  const char *code = json_string_value(json_object_get(json_object_get(verdict, "error"), "code"));
  fprintf(stderr, "capsule-host: call %s %s in %lld ms\n", c->tool, code ? code : "ok",
          mono_ms() - c->started_ms);
  if (!c->cancelled) send_result(c->id, call_result(verdict));
  json_decref(verdict);
  drop_slot(s, i);
  s->running--;
  start_next(s);
}

/* Queued calls that waited queueTimeoutMs fail with QUEUE_TIMEOUT; returns
 * the milliseconds until the next one would expire (-1: none queued). */
static int expire_queued(server *s) {
  long long now = mono_ms(), wait = s->h->cfg.limits.queue_timeout_ms, next = -1;
  for (size_t i = s->running; i < s->count;) {
    call_slot *c = &s->slots[i];
    long long left = c->arrived_ms + wait - now;
    if (left > 0) {
      if (next < 0 || left < next) next = left;
      i++;
      continue;
    }
    char msg[200];
    snprintf(msg, sizeof msg, "QUEUE_TIMEOUT: no cell became free within queueTimeoutMs %lld "
             "(maxConcurrentCalls %lld)", wait, s->h->cfg.limits.max_concurrent_calls);
    send_error(c->id, JSONRPC_SERVER_BUSY, msg, "QUEUE_TIMEOUT");
    drop_slot(s, i);
  }
  return next < 0 ? -1 : next > 1000000 ? 1000000 : (int)next;
}

static void begin_shutdown(server *s) {
  /* Queued calls never start; running ones are cancelled and joined. */
  while (s->count > s->running) {
    call_slot *c = &s->slots[s->running];
    if (!c->cancelled) send_error(c->id, JSONRPC_SERVER_BUSY, "CALL_CANCELLED: shutting down",
                                  "CALL_CANCELLED");
    drop_slot(s, s->running);
  }
  if (!s->cancel_sent)
    for (size_t i = 0; i < s->running; i++) supervisor_cancel(&s->slots[i].sup);
  s->cancel_sent = true;
}

int serve_run(host *h) {
  server s;
  memset(&s, 0, sizeof s);
  s.h = h;
  s.registry = host_registry(h);
  s.line = malloc((size_t)h->cfg.limits.max_frame_bytes + 1);
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGHUP);
  sigprocmask(SIG_BLOCK, &mask, NULL);
  int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (!s.line || sfd < 0) return 1;
  the_server = &s;
  fcntl(1, F_SETFL, fcntl(1, F_GETFL) | O_NONBLOCK);
  fprintf(stderr, "capsule-host: serving %zu tools and %zu prompt sections\n",
          json_array_size(json_object_get(s.registry, "tools")),
          json_array_size(json_object_get(s.registry, "promptSections")));
  for (;;) {
    if (s.shutting_down) begin_shutdown(&s);
    if (s.shutting_down && s.running == 0) break;
    int timeout = expire_queued(&s);
    flush_out(&s);
    bool backlogged = s.out_len > out_high_water(&s);
    size_t nfds = 3 + 2 * s.running;
    struct pollfd *p = calloc(nfds, sizeof *p);
    if (!p) break;
    p[0] = (struct pollfd){s.shutting_down || backlogged ? -1 : 0, POLLIN, 0};
    p[1] = (struct pollfd){sfd, POLLIN, 0};
    p[2] = (struct pollfd){s.out_len ? 1 : -1, POLLOUT, 0};
    for (size_t i = 0; i < s.running; i++) {
      p[3 + 2 * i] = (struct pollfd){s.slots[i].sup.result_fd, POLLIN, 0};
      p[4 + 2 * i] = (struct pollfd){s.slots[i].sup.pidfd, POLLIN, 0};
    }
    int r = poll(p, nfds, timeout);
    if (r < 0 && errno != EINTR) {
      free(p);
      break;
    }
    if (p[1].revents) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof si) == sizeof si) s.shutting_down = true;
    }
    /* Finished supervisors first (from the end, as finishing shifts slots). */
    for (size_t i = s.running; i-- > 0;) {
      call_slot *c = &s.slots[i];
      size_t max = supervisor_verdict_max(&h->cfg.limits);
      if (p[3 + 2 * i].revents) supervisor_read(&c->sup, max);
      if (p[4 + 2 * i].revents) {
        while (supervisor_read(&c->sup, max)) {
          struct pollfd w = {c->sup.result_fd, POLLIN, 0};
          if (poll(&w, 1, 100) <= 0) break; /* it exited: the pipe drains at once */
        }
        c->sup.exited = true;
        finish_call(&s, i);
      }
    }
    if (p[0].revents) read_stdin(&s);
    free(p);
  }
  /* Answers still buffered get shutdownTimeoutMs to leave; a client that
   * does not read them cannot hold the host. */
  long long until = mono_ms() + h->cfg.limits.shutdown_timeout_ms;
  for (flush_out(&s); s.out_len && !s.out_broken && mono_ms() < until; flush_out(&s)) {
    struct pollfd w = {1, POLLOUT, 0};
    poll(&w, 1, (int)(until - mono_ms() > 0 ? until - mono_ms() : 0));
  }
  close(sfd);
  free(s.out);
  free(s.line);
  free(s.slots);
  json_decref(s.registry);
  fprintf(stderr, "capsule-host: serve stopped, every cell joined\n");
  return 0;
}
