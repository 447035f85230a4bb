#include "manifest.h"

#include <string.h>

#include "digest.h"
#include "names.h"
#include "requests.h"
#include "safe_open.h"
#include "strict_json.h"

static cap_code unique_names(const json_t *arr, bool (*valid)(const char *), const char *what,
                             cap_error *err) {
  size_t i;
  json_t *v;
  json_array_foreach(arr, i, v) {
    if (!json_is_string(v) || !valid(json_string_value(v)))
      return cap_fail(err, CAP_E_MANIFEST_INVALID, "manifest %s[%zu] is not a valid name", what, i);
    for (size_t j = 0; j < i; j++)
      if (json_equal(v, json_array_get(arr, j)))
        return cap_fail(err, CAP_E_MANIFEST_INVALID, "manifest %s lists \"%s\" twice", what,
                        json_string_value(v));
  }
  return CAP_OK;
}

cap_code manifest_parse(const char *text, size_t len, const sj_limits *lim, long long max_contributions,
                        manifest *m, cap_error *err) {
  memset(m, 0, sizeof *m);
  json_t *root = sj_parse(text, len, lim, CAP_E_MANIFEST_INVALID, "manifest", err);
  if (!root) return err->code;
  m->json = root;
  static const char *const keys[] = {"protocol", "id", "entry", "integrity", "contributes", "requests", NULL};
  static const char *const integrity_keys[] = {"sha256", NULL};
  static const char *const contrib_keys[] = {"tools", "promptSections", NULL};
  const char *protocol;
  if (!sj_keys(root, keys, keys, CAP_E_MANIFEST_INVALID, "manifest", err) ||
      !sj_string(root, "protocol", &protocol, CAP_E_MANIFEST_INVALID, "manifest", err) ||
      !sj_string(root, "id", &m->id, CAP_E_MANIFEST_INVALID, "manifest", err) ||
      !sj_string(root, "entry", &m->entry, CAP_E_MANIFEST_INVALID, "manifest", err))
    return err->code;
  if (strcmp(protocol, MANIFEST_PROTOCOL) != 0)
    return cap_fail(err, CAP_E_MANIFEST_INVALID, "manifest protocol must be \"%s\"", MANIFEST_PROTOCOL);
  if (!names_is_id(m->id))
    return cap_fail(err, CAP_E_MANIFEST_INVALID, "manifest id \"%s\" is not a valid capsule id", m->id);
  if (strncmp(m->entry, "./", 2) == 0) m->entry += 2;
  if (!so_is_plain_relative(m->entry))
    return cap_fail(err, CAP_E_ENTRY_OPEN,
                    "manifest entry must be a plain relative path inside the capsule root");
  json_t *integrity = json_object_get(root, "integrity");
  if (!sj_keys(integrity, integrity_keys, integrity_keys, CAP_E_MANIFEST_INVALID, "manifest.integrity",
               err) ||
      !sj_string(integrity, "sha256", &m->sha256, CAP_E_MANIFEST_INVALID, "integrity", err))
    return err->code;
  if (!digest_is_sha256_hex(m->sha256))
    return cap_fail(err, CAP_E_MANIFEST_INVALID, "manifest integrity.sha256 must be 64 lowercase hex digits");
  json_t *contrib = json_object_get(root, "contributes");
  if (!sj_keys(contrib, contrib_keys, contrib_keys, CAP_E_MANIFEST_INVALID, "manifest.contributes", err) ||
      !sj_array(contrib, "tools", &m->tools, CAP_E_MANIFEST_INVALID, "contributes", err) ||
      !sj_array(contrib, "promptSections", &m->prompt_sections, CAP_E_MANIFEST_INVALID, "contributes", err) ||
      !sj_array(root, "requests", &m->requests, CAP_E_MANIFEST_INVALID, "manifest", err))
    return err->code;
  if (unique_names(m->tools, names_is_tool, "contributes.tools", err) ||
      unique_names(m->prompt_sections, names_is_id, "contributes.promptSections", err))
    return err->code;
  size_t total = json_array_size(m->tools) + json_array_size(m->prompt_sections);
  if ((long long)total > max_contributions)
    return cap_fail(err, CAP_E_DESCRIBE_LIMIT,
                    "manifest declares %zu contributions, maxContributions is %lld", total,
                    max_contributions);
  return requests_check_list(m->requests, "manifest.requests", CAP_E_MANIFEST_INVALID, err);
}

void manifest_free(manifest *m) {
  json_decref(m->json);
  m->json = NULL;
}
