/* MCP over JSON-RPC: what each method answers, in both eras one stdio
 * process serves (RFC §9): the stateless 2026-07-28 revision (version and
 * client capabilities in every request's _meta, server/discover, results
 * with resultType) and the initialize handshake of 2025-11-25 and
 * 2025-06-18. The scheduler (scheduler.c) owns calls; this file owns the
 * protocol, and says what becomes of each call (mcp_events). */
#include "mcp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admit/capsule.h"
#include "admit/config.h"
#include "call/call.h"
#include "call/verdict.h"
#include "host_state.h"
#include "jsonrpc_codes.h"
#include "jsonrpc_id.h"
#include "scheduler.h"
#include "serve_log.h"
#include "serve_output.h"
#include "strict_json.h"
#include "version.h"

#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPABILITIES "io.modelcontextprotocol/clientCapabilities"
#define META_SERVER_INFO "io.modelcontextprotocol/serverInfo"

/* The negotiation table (RFC §9). Modern: named in each request's _meta.
 * Legacy: chosen by initialize; any other requested version is answered
 * with the newest legacy one (the client decides whether it can speak it).
 * 2025-03-26 and 2024-11-05 are not served: 2025-03-26 requires JSON-RPC
 * batches, which this server refuses. */
static const char *const modern_version = "2026-07-28";
static const char *const legacy_versions[] = {"2025-11-25", "2025-06-18", NULL};

/* The catalog is fixed when activation publishes it and is the same for
 * every client: cacheable, public, for an hour. */
#define LIST_TTL_MS 3600000

typedef enum { ERA_LEGACY, ERA_MODERN } mcp_era;

typedef struct {
  const json_t *id;
  const char *method;
  const json_t *params;
  const json_t *progress_token;
  mcp_era era;
} mcp_request;

/* The name a refusal's JSON-RPC code has in the audit log. */
static const char *jsonrpc_code_name(int code) {
  switch (code) {
    case JSONRPC_INVALID_REQUEST: return "INVALID_REQUEST";
    case JSONRPC_INVALID_PARAMS: return "INVALID_PARAMS";
    case MCP_UNSUPPORTED_PROTOCOL_VERSION: return "UNSUPPORTED_PROTOCOL_VERSION";
    default: return "JSONRPC_ERROR";
  }
}

/* Answers r with an error. A tools/call refused before the scheduler saw
 * it still ends with its one audit line (C19), naming the code its answer
 * carries: the host's code when it has one, else the JSON-RPC error's. */
static void refuse_data(server *s, const mcp_request *r, int code, const char *message, json_t *data) {
  if (r->method && strcmp(r->method, "tools/call") == 0) {
    const char *name = json_string_value(json_object_get(r->params, "name"));
    const char *cap = json_string_value(json_object_get(data, "code"));
    serve_log_call(name ? name : "?", cap ? cap : jsonrpc_code_name(code), 0, "refused");
  }
  serve_output_send_error_data(s, r->id, code, message, data);
}

static void refuse(server *s, const mcp_request *r, int code, const char *message, const char *cap) {
  refuse_data(s, r, code, message, cap ? json_pack("{s:s}", "code", cap) : NULL);
}

static json_t *supported_versions(void) {
  json_t *all = json_pack("[s]", modern_version);
  for (const char *const *v = legacy_versions; *v; v++) json_array_append_new(all, json_string(*v));
  return all;
}

/* A result as the request's era wants it: 2026-07-28 results carry
 * resultType, and list results their caching hints. */
static void send_complete(server *s, const mcp_request *r, json_t *result, bool cacheable) {
  if (r->era == ERA_MODERN) {
    json_object_set_new(result, "resultType", json_string("complete"));
    if (cacheable) {
      json_object_set_new(result, "ttlMs", json_integer(LIST_TTL_MS));
      json_object_set_new(result, "cacheScope", json_string("public"));
    }
  }
  serve_output_send_result(s, r->id, result);
}

static json_t *tool_entry(const json_t *t) {
  return json_pack("{s:O,s:O,s:O}", "name", json_object_get(t, "name"), "description",
                   json_object_get(t, "description"), "inputSchema", json_object_get(t, "inputSchema"));
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

static json_t *capabilities(void) {
  return json_pack("{s:{s:b},s:{s:b}}", "tools", "listChanged", 0, "prompts", "listChanged", 0);
}

static json_t *server_info(void) {
  return json_pack("{s:s,s:s}", "name", "dsh-capsule", "version", CAPSULE_VERSION);
}

static void handle_initialize(server *s, const mcp_request *r) {
  const char *wanted = json_string_value(json_object_get(r->params, "protocolVersion"));
  const char *chosen = legacy_versions[0];
  for (const char *const *v = legacy_versions; wanted && *v; v++)
    if (strcmp(*v, wanted) == 0) chosen = *v;
  char *text = instructions(s);
  json_t *result = json_pack("{s:s,s:o,s:o,s:s}", "protocolVersion", chosen, "capabilities", capabilities(),
                             "serverInfo", server_info(), "instructions", text ? text : "");
  free(text);
  s->initialized = true;
  send_complete(s, r, result, false);
}

static void handle_discover(server *s, const mcp_request *r) {
  char *text = instructions(s);
  json_t *result =
      json_pack("{s:o,s:o,s:{s:o},s:s}", "supportedVersions", supported_versions(), "capabilities",
                capabilities(), "_meta", META_SERVER_INFO, server_info(), "instructions", text ? text : "");
  free(text);
  send_complete(s, r, result, true);
}

static void handle_call(server *s, const mcp_request *r) {
  const char *name = json_string_value(json_object_get(r->params, "name"));
  json_t *args = json_object_get(r->params, "arguments");
  if (!name || (args && !json_is_object(args)))
    return refuse(s, r, JSONRPC_INVALID_PARAMS, "tools/call needs a name and object arguments", NULL);
  if (scheduler_in_flight(s, r->id))
    /* A second request under a live id would make its answer and any
     * cancel ambiguous: the spec forbids reusing it. */
    return refuse(s, r, JSONRPC_INVALID_REQUEST, "request id already in use by a call in flight", NULL);
  loaded_capsule *cap = NULL;
  if (!call_find_tool(s->h, name, &cap)) {
    char msg[160];
    snprintf(msg, sizeof msg, "Unknown tool: %.100s", name);
    return refuse(s, r, JSONRPC_INVALID_PARAMS, msg, "TOOL_NOT_FOUND");
  }
  call_origin origin = {r->progress_token, r->era == ERA_MODERN};
  scheduler_admit(s, r->id, name, (size_t)(cap - s->h->caps), args, &origin);
}

static void handle_prompts_get(server *s, const mcp_request *r) {
  const char *name = json_string_value(json_object_get(r->params, "name"));
  size_t i;
  json_t *sec;
  json_array_foreach(json_object_get(s->registry, "promptSections"), i, sec) {
    if (name && strcmp(json_string_value(json_object_get(sec, "id")), name) == 0) {
      char desc[300];
      snprintf(desc, sizeof desc, "Static system-prompt section from capsule %s",
               json_string_value(json_object_get(sec, "capsuleId")));
      return send_complete(s, r,
                           json_pack("{s:s,s:[{s:s,s:{s:s,s:O}}]}", "description", desc, "messages", "role",
                                     "user", "content", "type", "text", "text", json_object_get(sec, "text")),
                           false);
    }
  }
  serve_output_send_error(s, r->id, JSONRPC_INVALID_PARAMS, "Unknown prompt", NULL);
}

/* Every entry fits one page, so this server never issues a cursor: any
 * cursor a client sends is one it did not get from us. */
static bool cursor_refused(server *s, const mcp_request *r) {
  if (!json_object_get(r->params, "cursor")) return false;
  serve_output_send_error(s, r->id, JSONRPC_INVALID_PARAMS,
                          "unknown cursor: this server lists everything in one page", NULL);
  return true;
}

static void handle_list(server *s, const mcp_request *r, bool tools) {
  if (cursor_refused(s, r)) return;
  json_t *out = json_array(), *entry;
  size_t i;
  if (tools)
    json_array_foreach(json_object_get(s->registry, "tools"), i, entry)
        json_array_append_new(out, tool_entry(entry));
  else
    json_array_foreach(json_object_get(s->registry, "promptSections"), i, entry)
        json_array_append_new(out, json_pack("{s:O,s:s}", "name", json_object_get(entry, "id"), "description",
                                             "Static system-prompt section"));
  send_complete(s, r, json_pack("{s:o}", tools ? "tools" : "prompts", out), true);
}

/* Reads the era from params._meta; false when the request was answered
 * with an error. */
static bool read_era(server *s, mcp_request *r) {
  const json_t *meta = json_object_get(r->params, "_meta");
  if (meta && !json_is_object(meta)) {
    refuse(s, r, JSONRPC_INVALID_PARAMS, "params._meta must be an object", NULL);
    return false;
  }
  const json_t *token = json_object_get(meta, "progressToken");
  if (token && !json_is_string(token) && !json_is_integer(token)) {
    refuse(s, r, JSONRPC_INVALID_PARAMS, "progressToken must be a string or an integer", NULL);
    return false;
  }
  r->progress_token = token;
  const json_t *version = json_object_get(meta, META_VERSION);
  r->era = version ? ERA_MODERN : ERA_LEGACY;
  if (!version) return true;
  if (!json_is_string(version) || strcmp(json_string_value(version), modern_version) != 0) {
    refuse_data(s, r, MCP_UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version",
                json_pack("{s:o,s:O}", "supported", supported_versions(), "requested", version));
    return false;
  }
  if (!json_is_object(json_object_get(meta, META_CAPABILITIES))) {
    refuse(s, r, JSONRPC_INVALID_PARAMS, "_meta must carry " META_CAPABILITIES " (an object)", NULL);
    return false;
  }
  return true;
}

static void dispatch(server *s, mcp_request *r) {
  const char *m = r->method;
  if (r->era == ERA_LEGACY) {
    if (strcmp(m, "initialize") == 0) return handle_initialize(s, r);
    if (strcmp(m, "ping") == 0) return send_complete(s, r, json_object(), false);
    if (!s->initialized)
      return refuse(s, r, JSONRPC_INVALID_REQUEST,
                    "no protocol version: send " META_VERSION
                    " (2026-07-28) in params._meta, or initialize first",
                    NULL);
  } else if (strcmp(m, "server/discover") == 0) {
    return handle_discover(s, r);
  }
  if (strcmp(m, "tools/list") == 0) return handle_list(s, r, true);
  if (strcmp(m, "tools/call") == 0) return handle_call(s, r);
  if (strcmp(m, "prompts/list") == 0) return handle_list(s, r, false);
  if (strcmp(m, "prompts/get") == 0) return handle_prompts_get(s, r);
  serve_output_send_error(s, r->id, JSONRPC_METHOD_NOT_FOUND, "Method not found", NULL);
}

/* A usable request id: a string or an integer (never null). */
static const json_t *request_id(const json_t *msg) {
  const json_t *id = json_object_get(msg, "id");
  return json_is_string(id) || json_is_integer(id) ? id : NULL;
}

static void handle_message(server *s, json_t *msg) {
  if (!json_is_object(msg))
    return serve_output_send_error(s, NULL, JSONRPC_INVALID_REQUEST,
                                   "expected one JSON-RPC object per line (batches are not accepted)", NULL);
  mcp_request r = {.id = request_id(msg),
                   .method = json_string_value(json_object_get(msg, "method")),
                   .params = json_object_get(msg, "params")};
  bool has_id = json_object_get(msg, "id") != NULL;
  const char *version = json_string_value(json_object_get(msg, "jsonrpc"));
  if (!version || strcmp(version, "2.0") != 0)
    return refuse(s, &r, JSONRPC_INVALID_REQUEST, "jsonrpc must be \"2.0\"", NULL);
  if (!r.method) {
    if (json_object_get(msg, "result") || json_object_get(msg, "error"))
      return; /* a response from the client: nothing was asked */
    return serve_output_send_error(s, r.id, JSONRPC_INVALID_REQUEST, "method is missing", NULL);
  }
  if (!has_id) {
    if (strcmp(r.method, "notifications/cancelled") == 0)
      scheduler_cancel(s, json_object_get(r.params, "requestId"));
    return; /* notifications/initialized and others need no answer */
  }
  if (!r.id) return refuse(s, &r, JSONRPC_INVALID_REQUEST, "id must be a string or an integer", NULL);
  if (r.params && !json_is_object(r.params))
    return refuse(s, &r, JSONRPC_INVALID_PARAMS, "params must be an object", NULL);
  if (read_era(s, &r)) dispatch(s, &r);
}

/* A line the strict parser refused: answered under its id when one can be
 * read (jsonrpc_id.c), otherwise a parse error; a tools/call among them
 * still leaves its one audit line (C19). */
static void refuse_line(server *s, const char *line, size_t len, const sj_limits *lim, const cap_error *err) {
  jsonrpc_refused r = jsonrpc_id_recover_refused(line, len, sj_parse_budget(len, lim));
  if (r.tools_call)
    serve_log_call(r.tool ? json_string_value(r.tool) : "?", cap_code_name(err->code), 0, "refused");
  if (r.id)
    serve_output_send_error(s, r.id, JSONRPC_INVALID_REQUEST, err->message, cap_code_name(err->code));
  else
    serve_output_send_error(s, NULL, JSONRPC_PARSE_ERROR, err->message, cap_code_name(err->code));
  jsonrpc_id_refused_free(&r);
}

/* JSON's whitespace only: a blank line carries no message (as an empty one). */
static bool blank(const char *line, size_t len) {
  for (size_t i = 0; i < len; i++)
    if (!strchr(" \t\r", line[i]) || line[i] == '\0') return false;
  return true;
}

void mcp_handle_line(server *s, const char *line, size_t len) {
  if (blank(line, len)) return;
  const host_limits *l = &s->h->cfg.limits;
  sj_limits lim = {(size_t)l->max_json_depth + 4, (size_t)l->max_json_nodes + 64};
  cap_error err = {0};
  json_t *msg = sj_parse(line, len, &lim, CAP_E_FRAME_INVALID_JSON, "JSON-RPC message", &err);
  if (!msg) return refuse_line(s, line, len, &lim, &err);
  handle_message(s, msg);
  json_decref(msg);
}

void mcp_refuse_long_line(server *s) {
  serve_output_send_error(s, NULL, JSONRPC_PARSE_ERROR, "message longer than maxFrameBytes",
                          "FRAME_TOO_LARGE");
}

static void send_progress(server *s, const json_t *token, int progress, const char *message) {
  serve_output_send(
      s, json_pack("{s:s,s:s,s:{s:O,s:i,s:i,s:s}}", "jsonrpc", "2.0", "method", "notifications/progress",
                   "params", "progressToken", token, "progress", progress, "total", 2, "message", message));
}

json_t *mcp_call_result(const verdict_reading *v, bool modern) {
  json_t *res;
  cap_code code = v->code;
  if (code == CAP_OK) {
    const json_t *r = v->payload;
    if (json_is_true(json_object_get(r, "isError"))) {
      res = json_pack("{s:[{s:s,s:O}],s:b}", "content", "type", "text", "text", json_object_get(r, "message"),
                      "isError", 1);
    } else {
      json_t *out = json_object_get(r, "output");
      char *text = json_dumps(out, JSON_COMPACT | JSON_ENCODE_ANY);
      res = json_pack("{s:[{s:s,s:s}],s:b}", "content", "type", "text", "text", text ? text : "null",
                      "isError", 0);
      free(text);
      if (res && json_is_object(out)) json_object_set(res, "structuredContent", out);
    }
  } else {
    char msg[900];
    snprintf(msg, sizeof msg, "%s: %s", cap_code_name(code), v->message);
    res = json_pack("{s:[{s:s,s:s}],s:b,s:{s:{s:s,s:s}}}", "content", "type", "text", "text", msg, "isError",
                    1, "_meta", "dsh-capsule/error", "code", cap_code_name(code), "message", v->message);
  }
  if (res && modern) json_object_set_new(res, "resultType", json_string("complete"));
  return res;
}

/* What the client is told when the scheduler decides. */
static void call_refused(server *s, const json_t *id, const cap_error *why) {
  char msg[700];
  snprintf(msg, sizeof msg, "%s: %s", cap_code_name(why->code), why->message);
  serve_output_send_error(s, id, JSONRPC_SERVER_BUSY, msg, cap_code_name(why->code));
}

static void call_started(server *s, const call_slot *c) {
  if (c->progress_token) send_progress(s, c->progress_token, 1, "cell started");
}

/* No "finished" progress before the result: a client may read both in one
 * read and look up the token after the result retired it (SDK v1 reports
 * that as an error). The result itself says the call ended. */
static void call_finished(server *s, const call_slot *c, const verdict_reading *verdict) {
  serve_output_send_result(s, c->id, mcp_call_result(verdict, c->modern));
}

const call_events mcp_events = {call_refused, call_started, call_finished};
