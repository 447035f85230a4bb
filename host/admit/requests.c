#include "requests.h"

#include <stdio.h>
#include <string.h>

#include "safe_open.h"
#include "strict_json.h"

static const char *const unsupported_kinds[] = {"workspace-write", "network-connect", "subprocess-exec",
                                                "storage", NULL};

cap_code requests_check_list(const json_t *list, const char *what, cap_code syntax_code, cap_error *err) {
  size_t i;
  json_t *r;
  json_array_foreach(list, i, r) {
    char where[64];
    snprintf(where, sizeof where, "%s[%zu]", what, i);
    const char *kind;
    if (!json_is_object(r)) return cap_fail(err, syntax_code, "%s must be an object", where);
    if (!sj_string(r, "kind", &kind, syntax_code, where, err)) return err->code;
    for (const char *const *k = unsupported_kinds; *k; k++)
      if (strcmp(kind, *k) == 0)
        return cap_fail(err, CAP_E_REQUEST_UNSUPPORTED, "%s: \"%s\" is not supported in protocol v0.1", where,
                        kind);
    if (strcmp(kind, "workspace-read") != 0)
      return cap_fail(err, syntax_code, "%s: unknown kind \"%s\"", where, kind);
    static const char *const keys[] = {"kind", "path", NULL};
    const char *path;
    if (!sj_keys(r, keys, keys, syntax_code, where, err) ||
        !sj_string(r, "path", &path, syntax_code, where, err))
      return err->code;
    if (!so_is_plain_relative(path))
      return cap_fail(err, CAP_E_WORKSPACE_PATH_INVALID,
                      "%s: path \"%s\" must be a plain relative path (no \"..\", \".\", "
                      "leading or doubled \"/\")",
                      where, path);
    for (size_t j = 0; j < i; j++) {
      const char *other = json_string_value(json_object_get(json_array_get(list, j), "path"));
      if (strcmp(other, path) == 0)
        return cap_fail(err, syntax_code, "%s: duplicate path \"%s\"", where, path);
    }
  }
  return CAP_OK;
}
