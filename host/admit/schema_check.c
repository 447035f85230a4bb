/* schema_check: which schemas the host admits (SCHEMA_INVALID). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "schema.h"

static const char *const type_names[] = {"object",  "array",   "string", "number",
                                         "integer", "boolean", "null",   NULL};

static bool is_type_name(const char *s) {
  for (const char *const *t = type_names; *t; t++)
    if (strcmp(*t, s) == 0) return true;
  return false;
}

static bool is_count(const json_t *v) {
  return json_is_integer(v) && json_integer_value(v) >= 0;
}

static cap_code check(const json_t *s, const char *at, cap_error *err);

static cap_code check_keyword(const char *k, const json_t *v, const char *at, cap_error *err) {
  char sub[512];
  if (strcmp(k, "type") == 0) {
    if (json_is_string(v) && is_type_name(json_string_value(v))) return CAP_OK;
    if (json_is_array(v) && json_array_size(v) > 0) {
      size_t i;
      json_t *t;
      json_array_foreach(
          v, i, t) if (!json_is_string(t) ||
                       !is_type_name(json_string_value(t))) return cap_fail(err, CAP_E_SCHEMA_INVALID,
                                                                            "%s: invalid type list", at);
      return CAP_OK;
    }
    return cap_fail(err, CAP_E_SCHEMA_INVALID, "%s: invalid \"type\"", at);
  }
  if (strcmp(k, "description") == 0 || strcmp(k, "title") == 0)
    return json_is_string(v) ? CAP_OK
                             : cap_fail(err, CAP_E_SCHEMA_INVALID, "%s: \"%s\" must be a string", at, k);
  if (strcmp(k, "properties") == 0) {
    if (!json_is_object(v))
      return cap_fail(err, CAP_E_SCHEMA_INVALID, "%s: \"properties\" must be an object", at);
    const char *name;
    json_t *p;
    json_object_foreach((json_t *)v, name, p) {
      snprintf(sub, sizeof sub, "%s/properties/%s", at, name);
      if (check(p, sub, err)) return err->code;
    }
    return CAP_OK;
  }
  if (strcmp(k, "required") == 0) {
    if (!json_is_array(v))
      return cap_fail(err, CAP_E_SCHEMA_INVALID, "%s: \"required\" must be an array", at);
    size_t i;
    json_t *r;
    json_array_foreach(v, i, r) if (!json_is_string(r)) return cap_fail(
        err, CAP_E_SCHEMA_INVALID, "%s: \"required\" entries must be strings", at);
    return CAP_OK;
  }
  if (strcmp(k, "additionalProperties") == 0) {
    if (json_is_boolean(v)) return CAP_OK;
    snprintf(sub, sizeof sub, "%s/additionalProperties", at);
    return check(v, sub, err);
  }
  if (strcmp(k, "items") == 0) {
    snprintf(sub, sizeof sub, "%s/items", at);
    return check(v, sub, err);
  }
  if (strcmp(k, "enum") == 0)
    return json_is_array(v) && json_array_size(v) > 0
               ? CAP_OK
               : cap_fail(err, CAP_E_SCHEMA_INVALID, "%s: \"enum\" must be a non-empty array", at);
  if (strcmp(k, "const") == 0) return CAP_OK;
  if (strcmp(k, "minimum") == 0 || strcmp(k, "maximum") == 0)
    return json_is_number(v) ? CAP_OK
                             : cap_fail(err, CAP_E_SCHEMA_INVALID, "%s: \"%s\" must be a number", at, k);
  if (strcmp(k, "minLength") == 0 || strcmp(k, "maxLength") == 0 || strcmp(k, "minItems") == 0 ||
      strcmp(k, "maxItems") == 0)
    return is_count(v)
               ? CAP_OK
               : cap_fail(err, CAP_E_SCHEMA_INVALID, "%s: \"%s\" must be a non-negative integer", at, k);
  return cap_fail(err, CAP_E_SCHEMA_INVALID, "%s: unsupported schema keyword \"%s\"", at, k);
}

static cap_code check(const json_t *s, const char *at, cap_error *err) {
  if (!json_is_object(s)) return cap_fail(err, CAP_E_SCHEMA_INVALID, "%s: schema must be an object", at);
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)s, k, v) if (check_keyword(k, v, at, err)) return err->code;
  return CAP_OK;
}

cap_code schema_check(const json_t *schema, cap_error *err) {
  if (check(schema, "inputSchema", err)) return err->code;
  const char *t = json_string_value(json_object_get(schema, "type"));
  if (!t || strcmp(t, "object") != 0)
    return cap_fail(err, CAP_E_SCHEMA_INVALID, "inputSchema must have \"type\": \"object\" at the top level");
  return CAP_OK;
}
