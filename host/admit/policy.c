#include "policy.h"

#include <string.h>

#include "config.h"
#include "manifest.h"
#include "strict_json.h"

cap_code policy_check(const capsule_config *cfg, const manifest *m, cap_error *err) {
  if (strcmp(cfg->capsule_id, m->id) != 0)
    return cap_fail(err, CAP_E_POLICY_ID_MISMATCH,
                    "manifest id \"%s\" does not match policy.capsuleId \"%s\"", m->id, cfg->capsule_id);
  size_t i;
  json_t *v;
  json_array_foreach(
      m->tools, i,
      v) if (!sj_array_has_string(cfg->tools,
                                  json_string_value(v))) return cap_fail(err, CAP_E_POLICY_TOOL_NOT_ALLOWED,
                                                                         "tool \"%s\" is not in policy.tools",
                                                                         json_string_value(v));
  json_array_foreach(m->prompt_sections, i, v) if (
      !sj_array_has_string(
          cfg->prompt_sections,
          json_string_value(v))) return cap_fail(err, CAP_E_POLICY_PROMPT_NOT_ALLOWED,
                                                 "prompt section \"%s\" is not in policy.promptSections",
                                                 json_string_value(v));
  /* A request is granted only by an identical grant (same kind, same path). */
  json_array_foreach(m->requests, i, v) {
    const char *path = json_string_value(json_object_get(v, "path"));
    bool granted = false;
    size_t j;
    json_t *g;
    json_array_foreach(cfg->grants, j, g) if (json_equal(g, v)) granted = true;
    if (!granted)
      return cap_fail(err, CAP_E_POLICY_REQUEST_NOT_GRANTED,
                      "request workspace-read \"%s\" has no identical policy grant", path);
  }
  return CAP_OK;
}
