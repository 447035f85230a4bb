#include <stdbool.h>
#include <string.h>

#include "statement_schema.h"

/* The object at path's parent within root, made when make is set; name
 * gets path's last component. NULL when a step is not an object. */
static json_t *parent_of(json_t *root, const char *path, bool make, const char **name) {
  json_t *at = root;
  const char *step = path, *slash;
  while ((slash = strchr(step, '/')) != NULL) {
    char key[128];
    size_t len = (size_t)(slash - step);
    if (len >= sizeof key) return NULL;
    memcpy(key, step, len);
    key[len] = '\0';
    json_t *next = json_object_get(at, key);
    if (!next && make) json_object_set_new(at, key, next = json_object());
    if (!json_is_object(next)) return NULL;
    at = next;
    step = slash + 1;
  }
  *name = step;
  return at;
}

json_t *statement_schema_at(const json_t *root, const char *path) {
  const char *name;
  json_t *parent = parent_of((json_t *)root, path, false, &name);
  return parent ? json_object_get(parent, name) : NULL;
}

void statement_schema_remove(json_t *root, const char *path) {
  const char *name;
  json_t *parent = parent_of(root, path, false, &name);
  if (parent) json_object_del(parent, name);
}

/* The row and every row above it are required: its value must stand. */
static bool required_all_the_way(const schema_row *rows, const schema_row *row) {
  if (!row->required) return false;
  size_t len = strlen(row->path);
  for (const schema_row *r = rows; r->path; r++) {
    size_t n = strlen(r->path);
    if (n < len && row->path[n] == '/' && strncmp(r->path, row->path, n) == 0 && !r->required) return false;
  }
  return true;
}

bool statement_schema_give(json_t **out, json_t *value) {
  *out = value;
  return true;
}

cap_code statement_schema_build(const schema_row *rows, statement_schema_value_fn value, void *ctx,
                                const char *what, json_t **out, cap_error *err) {
  json_t *built = json_object();
  for (const schema_row *r = rows; r->path; r++) {
    if (r->from == SRC_NONE) continue;
    json_t *v = NULL;
    if (!value(r, ctx, &v)) {
      json_decref(built);
      *out = NULL;
      return cap_fail(err, CAP_E_INTERNAL, "the %s cannot be built: its writer has no source for %s", what,
                      r->path);
    }
    const char *name;
    json_t *parent = v ? parent_of(built, r->path, true, &name) : NULL;
    if (parent) {
      json_object_set_new(parent, name, v);
      continue;
    }
    json_decref(v);
    if (v || required_all_the_way(rows, r)) {
      json_decref(built);
      *out = NULL;
      return cap_fail(err, CAP_E_INTERNAL, "the %s cannot be built: it has no value for %s", what, r->path);
    }
  }
  *out = built;
  return CAP_OK;
}
