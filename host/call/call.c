/* One tool call: find the tool, check its input before any cell exists,
 * then a fresh cell (started now, or a warm one started ahead whose loader
 * has not loaded the guest) that must describe exactly what activation
 * admitted, one call, shutdown, exact join. */
#include <stdbool.h>
#include <string.h>

#include "admit/call_result.h"
#include "admit/capsule.h"
#include "admit/schema.h"
#include "admit/workspace.h"
#include "cell/cell.h"
#include "cell/described_cell.h"
#include "clock.h"
#include "host_state.h"
#include "strict_json.h"

const json_t *call_find_tool(const host *h, const char *name, loaded_capsule **cap) {
  for (size_t i = 0; i < h->cap_count; i++) {
    size_t k;
    json_t *v;
    json_array_foreach(json_object_get(h->caps[i].descriptor, "tools"), k, v) {
      if (strcmp(json_string_value(json_object_get(v, "name")), name) == 0) {
        if (cap) *cap = &h->caps[i];
        return v;
      }
    }
  }
  return NULL;
}

/* Everything checked before a cell is asked anything: the tool exists,
 * its input is within the JSON limits and its schema. */
static cap_code check_call(const host *h, const char *tool, const json_t *input, loaded_capsule **cap,
                           cap_error *err) {
  const json_t *desc = call_find_tool(h, tool, cap);
  if (!desc) {
    char names[400] = "";
    size_t used = 0;
    for (size_t i = 0; i < h->cap_count && used < sizeof names; i++) {
      size_t k;
      json_t *t;
      json_array_foreach(json_object_get(h->caps[i].descriptor, "tools"), k, t) if (used < sizeof names)
          used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "",
                                   json_string_value(json_object_get(t, "name")));
    }
    return cap_fail(err, CAP_E_TOOL_NOT_FOUND,
                    "no published tool is named \"%.200s\"; the published tools: %s", tool,
                    used ? names : "none");
  }
  sj_limits jl = {(size_t)h->cfg.limits.max_json_depth, (size_t)h->cfg.limits.max_json_nodes};
  if (!sj_within(input, &jl))
    return cap_fail(err, CAP_E_JSON_LIMIT, "tool input exceeds maxJsonDepth/maxJsonNodes");
  return schema_validate(json_object_get(desc, "inputSchema"), input, err);
}

cap_code call_descriptor_matches(const loaded_capsule *cap, const json_t *reply, cap_error *err) {
  json_t *seen = json_copy((json_t *)reply);
  if (seen) json_object_del(seen, "type");
  bool same = seen && json_equal(seen, cap->descriptor);
  json_decref(seen);
  return same ? CAP_OK
              : cap_fail(err, CAP_E_DESCRIPTOR_CHANGED, "call cell describes different tools or prompts");
}

/* From a cell's describe.result on: the descriptor comparison, the one
 * call, shutdown and the exact join. Always joins the cell. */
static cap_code call_described_cell(host *h, loaded_capsule *cap, cell *c, cap_code rc, json_t *reply,
                                    const char *tool, const json_t *input, json_t **result, cap_error *err) {
  json_t *req;
  long long deadline = 0;
  /* Each cell must present exactly the descriptors admitted at activation. */
  if (!rc) rc = call_descriptor_matches(cap, reply, err);
  json_decref(reply);
  reply = NULL;
  if (!rc) {
    deadline = mono_ms() + h->cfg.limits.call_timeout_ms;
    req = json_pack("{s:s,s:s,s:O}", "type", "call", "tool", tool, "input", input);
    rc = cell_send(c, req, deadline, CAP_E_CELL_CALL_TIMEOUT, err);
    json_decref(req);
  }
  /* A call.result is one output (maxJsonNodes) in a small envelope: the
   * frame's parse may hold no more, whatever many cells answer at once. */
  c->frame_limits.max_nodes = (size_t)h->cfg.limits.max_json_nodes + 16;
  if (!rc) rc = cell_expect(c, "call.result", deadline, CAP_E_CELL_CALL_TIMEOUT, &reply, err);
  if (!rc) rc = call_result_admit(reply, &h->cfg.limits, result, err);
  json_decref(reply);
  rc = cell_finish(c, rc, err);
  if (h->timings) json_object_set_new(h->timings, "call", cell_timings_json(c));
  if (rc) {
    json_decref(*result);
    *result = NULL;
  }
  return rc;
}

cap_code call_tool(host *h, const char *tool, const json_t *input, json_t **result, cap_error *err) {
  *result = NULL;
  loaded_capsule *cap = NULL;
  /* Input is checked before a cell exists. */
  if (check_call(h, tool, input, &cap, err)) return err->code;
  cell c;
  bool started;
  json_t *reply;
  cap_code rc = described_cell_start(h, cap, &c, &started, &reply, err);
  if (!started) return rc;
  return call_described_cell(h, cap, &c, rc, reply, tool, input, result, err);
}

cap_code call_tool_in_warm_cell(host *h, loaded_capsule *warm_cap, cell *c, json_t *described,
                                const char *tool, const json_t *input, json_t **result, cap_error *err) {
  *result = NULL;
  loaded_capsule *cap = NULL;
  json_t *reply = described;
  cap_code rc = check_call(h, tool, input, &cap, err);
  if (!rc && cap != warm_cap)
    rc = cap_fail(err, CAP_E_INTERNAL, "a warm cell of another capsule was given this call");
  /* The launcher checked the workspace when the cell started; a grant
   * replaced since is refused as a cold cell's launcher would refuse it,
   * before the guest sees any byte of the call. */
  if (!rc) rc = workspace_unchanged(cap->cfg->workspace_root, &cap->workspace, err);
  if (!rc && !described) rc = described_cell_load(c, &reply, err);
  return call_described_cell(h, warm_cap, c, rc, reply, tool, input, result, err);
}
