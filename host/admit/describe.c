#include "describe.h"

#include <string.h>

#include "config.h"
#include "manifest.h"
#include "schema.h"
#include "strict_json.h"

/* The describe reply's entry i of offered (named by its key) is one the
 * manifest declares, and no earlier entry has its name. */
static cap_code offered_once(const json_t *offered, size_t i, const char *key, const char *name,
                             const json_t *declared, const char *what, cap_error *err) {
  if (!sj_array_has_string(declared, name))
    return cap_fail(err, CAP_E_DESCRIBE_MISMATCH, "describe offers %s \"%s\" not in the manifest", what,
                    name);
  for (size_t j = 0; j < i; j++)
    if (strcmp(json_string_value(json_object_get(json_array_get(offered, j), key)), name) == 0)
      return cap_fail(err, CAP_E_DESCRIBE_MISMATCH, "describe offers %s \"%s\" twice", what, name);
  return CAP_OK;
}

static cap_code admit_tools(const json_t *tools, const manifest *m, const host_limits *lim, cap_error *err) {
  size_t i;
  json_t *t;
  static const char *const keys[] = {"name", "description", "inputSchema", NULL};
  sj_limits jl = {(size_t)lim->max_json_depth, (size_t)lim->max_json_nodes};
  json_array_foreach(tools, i, t) {
    const char *name, *desc;
    if (!sj_keys(t, keys, keys, CAP_E_PROTOCOL_VIOLATION, "describe tool", err) ||
        !sj_string(t, "name", &name, CAP_E_PROTOCOL_VIOLATION, "tool", err) ||
        !sj_string(t, "description", &desc, CAP_E_PROTOCOL_VIOLATION, "tool", err))
      return err->code;
    if (offered_once(tools, i, "name", name, m->tools, "tool", err)) return err->code;
    size_t dlen = strlen(desc);
    if (dlen == 0 || (long long)dlen > lim->max_description_bytes)
      return cap_fail(err, CAP_E_DESCRIBE_LIMIT,
                      "tool \"%s\" description is %zu bytes (1..maxDescriptionBytes %lld)", name, dlen,
                      lim->max_description_bytes);
    json_t *schema = json_object_get(t, "inputSchema");
    if (!sj_within(schema, &jl))
      return cap_fail(err, CAP_E_JSON_LIMIT, "tool \"%s\" inputSchema exceeds maxJsonDepth/maxJsonNodes",
                      name);
    if (schema_check(schema, err)) return err->code;
  }
  if (json_array_size(tools) != json_array_size(m->tools))
    return cap_fail(err, CAP_E_DESCRIBE_MISMATCH, "describe offers %zu tools, manifest declares %zu",
                    json_array_size(tools), json_array_size(m->tools));
  return CAP_OK;
}

static cap_code admit_sections(const json_t *sections, const manifest *m, const host_limits *lim,
                               cap_error *err) {
  size_t i;
  json_t *s;
  static const char *const keys[] = {"id", "text", NULL};
  json_array_foreach(sections, i, s) {
    const char *id, *text;
    if (!sj_keys(s, keys, keys, CAP_E_PROTOCOL_VIOLATION, "describe prompt section", err) ||
        !sj_string(s, "id", &id, CAP_E_PROTOCOL_VIOLATION, "section", err) ||
        !sj_string(s, "text", &text, CAP_E_PROTOCOL_VIOLATION, "section", err))
      return err->code;
    if (offered_once(sections, i, "id", id, m->prompt_sections, "prompt section", err)) return err->code;
    size_t tlen = strlen(text);
    if (tlen == 0 || (long long)tlen > lim->max_prompt_bytes)
      return cap_fail(err, CAP_E_DESCRIBE_LIMIT,
                      "prompt section \"%s\" is %zu bytes (1..maxPromptBytes %lld)", id, tlen,
                      lim->max_prompt_bytes);
    /* DSH treats {{...}} as a strict template reference and would throw at
     * prompt assembly; refuse rather than rewrite guest text. */
    if (strstr(text, "{{"))
      return cap_fail(err, CAP_E_PROMPT_TEMPLATE_REFUSED,
                      "prompt section \"%s\" contains \"{{\", which DSH reads as a template", id);
  }
  if (json_array_size(sections) != json_array_size(m->prompt_sections))
    return cap_fail(err, CAP_E_DESCRIBE_MISMATCH,
                    "describe offers %zu prompt sections, manifest declares %zu", json_array_size(sections),
                    json_array_size(m->prompt_sections));
  return CAP_OK;
}

cap_code describe_admit(const json_t *reply, const manifest *m, const host_limits *lim, json_t **descriptor,
                        cap_error *err) {
  static const char *const keys[] = {"type", "tools", "promptSections", NULL};
  json_t *tools, *sections;
  *descriptor = NULL;
  if (!sj_keys(reply, keys, keys, CAP_E_PROTOCOL_VIOLATION, "describe.result", err) ||
      !sj_array(reply, "tools", &tools, CAP_E_PROTOCOL_VIOLATION, "describe.result", err) ||
      !sj_array(reply, "promptSections", &sections, CAP_E_PROTOCOL_VIOLATION, "describe.result", err))
    return err->code;
  size_t total = json_array_size(tools) + json_array_size(sections);
  if ((long long)total > lim->max_contributions)
    return cap_fail(err, CAP_E_DESCRIBE_LIMIT, "describe offers %zu contributions (max %lld)", total,
                    lim->max_contributions);
  if (admit_tools(tools, m, lim, err) || admit_sections(sections, m, lim, err)) return err->code;
  *descriptor = json_pack("{s:O,s:O}", "tools", tools, "promptSections", sections);
  return *descriptor ? CAP_OK : cap_fail(err, CAP_E_INTERNAL, "out of memory building the descriptor");
}
