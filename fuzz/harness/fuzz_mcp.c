/* capsule-host serve's MCP handling: each input is a stream of lines, fed
 * one by one to the real dispatch (mcp.c) and the real scheduler
 * (scheduler.c) of one server, through its call-runner seam: calls are
 * admitted, queued, refused BUSY, cancelled and checked for reused ids
 * exactly as in serve, but no supervisor is forked. Both eras, every
 * method. A tool named fails_to_start exercises the start-failure path;
 * a line "#shutdown" begins shutdown, as stdin EOF or a signal would;
 * a line "#verdict <json>" is mapped to a tools/call result as a
 * supervisor's verdict is (both eras).
 *
 * Over the whole sequence it checks serve's invariants (issue 50): every
 * message serve writes is one JSON-RPC 2.0 object, and every answer under
 * an id answers a request that carried that id and was not answered yet:
 * no invented id, no second answer. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admit/capsule.h"
#include "fuzz_reach.h"
#include "host_state.h"
#include "serve/jsonrpc_id.h"
#include "serve/mcp.h"
#include "serve/server.h"

static cap_code fake_start(host *h, const char *tool, const json_t *input, call_supervisor *sup,
                           cap_error *err) {
  (void)h;
  (void)input;
  memset(sup, 0, sizeof *sup);
  sup->pid = -1;
  sup->pidfd = -1;
  sup->result_fd = -1;
  if (strcmp(tool, "fails_to_start") == 0)
    return cap_fail(err, CAP_E_LAUNCH_FAILED, "fuzz: this call cannot start");
  return CAP_OK;
}

static void fake_cancel(call_supervisor *sup) {
  (void)sup;
}

static const call_runner fake_runner = {fake_start, fake_cancel};

static const char tools_json[] =
    "[{\"name\":\"capsule_echo\",\"description\":\"echo\",\"inputSchema\":{\"type\":\"object\"}},"
    "{\"name\":\"fails_to_start\",\"description\":\"x\",\"inputSchema\":{\"type\":\"object\"}}]";

static host *fake_host(void) {
  static host h;
  static loaded_capsule cap;
  config_defaults(&h.cfg);
  /* Small limits, so that queue, BUSY and the parser's caps are all reachable. */
  h.cfg.limits.max_concurrent_calls = 2;
  h.cfg.limits.max_queued_calls = 2;
  h.cfg.limits.max_json_depth = 8;
  h.cfg.limits.max_json_nodes = 200;
  h.cfg.limits.max_frame_bytes = 4096;
  cap.descriptor = json_pack("{s:o}", "tools", json_loads(tools_json, 0, NULL));
  h.caps = &cap;
  h.cap_count = 1;
  return &h;
}

/* What serve wrote for one line: "answer result", "answer <JSON-RPC error
 * code>" or "notify <method>" per message (replay build only: parsing the
 * output costs time the fuzzer should spend on inputs). */
static void report_output(const server *s) {
#ifdef FUZZ_REACH
  if (!s->out) return;
  const char *p = s->out, *end = s->out + s->out_len;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = (size_t)((nl ? nl : end) - p);
    json_t *msg = json_loadb(p, len, 0, NULL);
    json_t *error = json_object_get(msg, "error");
    char code[32];
    if (error) {
      snprintf(code, sizeof code, "%lld", (long long)json_integer_value(json_object_get(error, "code")));
      fuzz_reached_text("answer", code);
    } else if (json_object_get(msg, "result")) {
      fuzz_reached_text("answer", "result");
    } else if (json_is_string(json_object_get(msg, "method"))) {
      fuzz_reached_text("notify", json_string_value(json_object_get(msg, "method")));
    }
    json_decref(msg);
    p += len + 1;
  }
#else
  (void)s;
#endif
}

/* Requests seen and not yet answered, per id (its compact JSON text). */
static json_t *open_ids;

static void id_key(const json_t *id, char *key, size_t size) {
  char *text = json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT);
  snprintf(key, size, "%s", text ? text : "?");
  free(text);
}

/* An id is read from a line as serve reads it (also from a line it refuses). */
static void note_request(const char *line, size_t len) {
  json_t *id = jsonrpc_id_recover(line, len, 1 << 20);
  if (!id) return;
  char key[256];
  id_key(id, key, sizeof key);
  json_object_set_new(open_ids, key, json_integer(json_integer_value(json_object_get(open_ids, key)) + 1));
  json_decref(id);
}

static void check_output(const server *s) {
  if (!s->out) return; /* nothing written yet */
  const char *p = s->out, *end = s->out + s->out_len;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = (size_t)((nl ? nl : end) - p);
    json_t *msg = json_loadb(p, len, 0, NULL);
    const char *version = json_string_value(json_object_get(msg, "jsonrpc"));
    if (!json_is_object(msg) || !version || strcmp(version, "2.0") != 0)
      abort(); /* not one JSON-RPC message */
    const json_t *id = json_object_get(msg, "id");
    if (id && !json_is_null(id) && !json_object_get(msg, "method")) {
      char key[256];
      id_key(id, key, sizeof key);
      json_int_t open = json_integer_value(json_object_get(open_ids, key));
      if (open <= 0) abort(); /* an answer to no open request: invented, or a second one */
      json_object_set_new(open_ids, key, json_integer(open - 1));
    }
    json_decref(msg);
    p += len + 1;
  }
}

static void forget_calls(server *s) {
  for (size_t i = 0; i < s->count; i++) {
    json_decref(s->slots[i].id);
    json_decref(s->slots[i].input);
    json_decref(s->slots[i].progress_token);
    free(s->slots[i].tool);
  }
  free(s->slots);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static host *h;
  static json_t *registry;
  if (!h) {
    h = fake_host();
    registry =
        json_pack("{s:o,s:[{s:s,s:s,s:s}]}", "tools", json_loads(tools_json, 0, NULL), "promptSections", "id",
                  "fuzz.section", "text", "Use capsule_echo.", "capsuleId", "fuzz.capsule");
  }
  json_decref(open_ids);
  open_ids = json_object();
  server s;
  memset(&s, 0, sizeof s);
  s.h = h;
  s.runner = &fake_runner;
  s.events = &mcp_events;
  s.registry = registry;
  const char *p = (const char *)data, *end = p + size;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = (size_t)((nl ? nl : end) - p);
    if (len == 9 && memcmp(p, "#shutdown", 9) == 0) {
      s.shutting_down = true;
    } else if (len > 9 && memcmp(p, "#verdict ", 9) == 0) {
      json_t *verdict = json_loadb(p + 9, len - 9, 0, NULL);
      verdict_reading v;
      verdict_read(verdict, VERDICT_RESULT, &v);
      if (verdict) json_decref(mcp_call_result(&v, len % 2));
      json_decref(verdict);
    } else if (len <= (size_t)h->cfg.limits.max_frame_bytes) {
      /* serve discards a longer line before dispatch (FRAME_TOO_LARGE). */
      note_request(p, len);
      mcp_handle_line(&s, p, len);
    }
    check_output(&s);
    report_output(&s);
    s.out_len = 0; /* what stdout would have taken */
    p += len + 1;
  }
  forget_calls(&s);
  free(s.out);
  json_decref(open_ids);
  open_ids = NULL;
  return 0;
}
