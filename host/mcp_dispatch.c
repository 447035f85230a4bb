/* MCP over JSON-RPC: what each method answers. The scheduler (serve.c)
 * owns calls; this file owns the protocol. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve_state.h"
#include "strict_json.h"
#include "version.h"

static const char *const protocol_versions[] = {"2025-06-18", "2025-03-26", "2024-11-05", NULL};

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
  serve_send_result(s, id, result);
}

static void handle_call(server *s, const json_t *id, const json_t *params) {
  const char *name = json_string_value(json_object_get(params, "name"));
  json_t *args = json_object_get(params, "arguments");
  if (!name || (args && !json_is_object(args)))
    return serve_send_error(s, id, JSONRPC_INVALID_PARAMS, "tools/call needs a name and object arguments",
                      NULL);
  if (!host_find_tool(s->h, name, NULL)) {
    char msg[160];
    snprintf(msg, sizeof msg, "Unknown tool: %.100s", name);
    return serve_send_error(s, id, JSONRPC_INVALID_PARAMS, msg, "TOOL_NOT_FOUND");
  }
  serve_admit_call(s, id, name, args);
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
      return serve_send_result(s, id, json_pack("{s:s,s:[{s:s,s:{s:s,s:O}}]}", "description", desc,
                                       "messages", "role", "user", "content", "type", "text",
                                       "text", json_object_get(sec, "text")));
    }
  }
  serve_send_error(s, id, JSONRPC_INVALID_PARAMS, "Unknown prompt", NULL);
}

static void handle_message(server *s, json_t *msg) {
  if (!json_is_object(msg))
    return serve_send_error(s, NULL, JSONRPC_INVALID_REQUEST, "expected one JSON-RPC object per line", NULL);
  const char *method = json_string_value(json_object_get(msg, "method"));
  json_t *id = json_object_get(msg, "id");
  json_t *params = json_object_get(msg, "params");
  const char *version = json_string_value(json_object_get(msg, "jsonrpc"));
  if (!version || strcmp(version, "2.0") != 0)
    return serve_send_error(s, id, JSONRPC_INVALID_REQUEST, "jsonrpc must be \"2.0\"", NULL);
  if (!method) return; /* a response from the client: nothing was asked */
  if (!id) {
    if (strcmp(method, "notifications/cancelled") == 0) serve_cancel(s, json_object_get(params, "requestId"));
    return; /* notifications/initialized and others need no answer */
  }
  if (!json_is_string(id) && !json_is_integer(id))
    return serve_send_error(s, NULL, JSONRPC_INVALID_REQUEST, "id must be a string or an integer", NULL);
  if (strcmp(method, "initialize") == 0) return handle_initialize(s, id, params);
  if (strcmp(method, "ping") == 0) return serve_send_result(s, id, json_object());
  if (!s->initialized)
    return serve_send_error(s, id, JSONRPC_NOT_INITIALIZED, "initialize first", NULL);
  if (strcmp(method, "tools/list") == 0) {
    json_t *tools = json_array(), *t;
    size_t i;
    json_array_foreach(json_object_get(s->registry, "tools"), i, t)
        json_array_append_new(tools, tool_entry(t));
    return serve_send_result(s, id, json_pack("{s:o}", "tools", tools));
  }
  if (strcmp(method, "tools/call") == 0) {
    if (s->shutting_down)
      return serve_send_error(s, id, JSONRPC_SERVER_BUSY, "BUSY: shutting down", "BUSY");
    return handle_call(s, id, params);
  }
  if (strcmp(method, "prompts/list") == 0) {
    json_t *prompts = json_array(), *sec;
    size_t i;
    json_array_foreach(json_object_get(s->registry, "promptSections"), i, sec)
        json_array_append_new(prompts,
                              json_pack("{s:O,s:s}", "name", json_object_get(sec, "id"),
                                        "description", "Static system-prompt section"));
    return serve_send_result(s, id, json_pack("{s:o}", "prompts", prompts));
  }
  if (strcmp(method, "prompts/get") == 0) return handle_prompts_get(s, id, params);
  serve_send_error(s, id, JSONRPC_METHOD_NOT_FOUND, "Method not found", NULL);
}

void mcp_handle_line(server *s, const char *line, size_t len) {
  if (len == 0) return;
  const host_limits *l = &s->h->cfg.limits;
  sj_limits lim = {(size_t)l->max_json_depth + 4, (size_t)l->max_json_nodes + 64};
  cap_error err = {0};
  json_t *msg = sj_parse(line, len, &lim, CAP_E_FRAME_INVALID_JSON, "JSON-RPC message", &err);
  if (!msg) return serve_send_error(s, NULL, JSONRPC_PARSE_ERROR, err.message, cap_code_name(err.code));
  handle_message(s, msg);
  json_decref(msg);
}

json_t *mcp_call_result(json_t *verdict) {
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
