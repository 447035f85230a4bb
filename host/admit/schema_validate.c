/* schema_validate: tool input against an admitted schema (INPUT_INVALID). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "schema.h"

static bool has_type(const json_t *v, const char *t) {
  if (strcmp(t, "object") == 0) return json_is_object(v);
  if (strcmp(t, "array") == 0) return json_is_array(v);
  if (strcmp(t, "string") == 0) return json_is_string(v);
  if (strcmp(t, "number") == 0) return json_is_number(v);
  if (strcmp(t, "integer") == 0)
    return json_is_integer(v) || (json_is_real(v) && floor(json_real_value(v)) == json_real_value(v));
  if (strcmp(t, "boolean") == 0) return json_is_boolean(v);
  return json_is_null(v);
}

static bool type_ok(const json_t *type, const json_t *v) {
  if (!type) return true;
  if (json_is_string(type)) return has_type(v, json_string_value(type));
  size_t i;
  json_t *t;
  json_array_foreach(type, i, t) if (has_type(v, json_string_value(t))) return true;
  return false;
}

/* Unicode code points, as JSON Schema counts string length. */
static size_t utf8_length(const char *s) {
  size_t n = 0;
  for (; *s; s++)
    if (((unsigned char)*s & 0xC0) != 0x80) n++;
  return n;
}

static bool numbers_equal(const json_t *a, const json_t *b) {
  return json_is_number(a) && json_is_number(b) && json_number_value(a) == json_number_value(b);
}

static bool value_equal(const json_t *a, const json_t *b) {
  return json_equal((json_t *)a, (json_t *)b) || numbers_equal(a, b);
}

static cap_code validate(const json_t *s, const json_t *v, const char *at, cap_error *err) {
  if (!type_ok(json_object_get(s, "type"), v))
    return cap_fail(err, CAP_E_INPUT_INVALID, "%s: wrong type", at);
  json_t *k;
  if ((k = json_object_get(s, "const")) && !value_equal(k, v))
    return cap_fail(err, CAP_E_INPUT_INVALID, "%s: value differs from const", at);
  if ((k = json_object_get(s, "enum"))) {
    bool found = false;
    size_t i;
    json_t *e;
    json_array_foreach(k, i, e) if (value_equal(e, v)) found = true;
    if (!found) return cap_fail(err, CAP_E_INPUT_INVALID, "%s: value not in enum", at);
  }
  if (json_is_number(v)) {
    if ((k = json_object_get(s, "minimum")) && json_number_value(v) < json_number_value(k))
      return cap_fail(err, CAP_E_INPUT_INVALID, "%s: below minimum", at);
    if ((k = json_object_get(s, "maximum")) && json_number_value(v) > json_number_value(k))
      return cap_fail(err, CAP_E_INPUT_INVALID, "%s: above maximum", at);
  }
  if (json_is_string(v)) {
    size_t n = utf8_length(json_string_value(v));
    if ((k = json_object_get(s, "minLength")) && n < (size_t)json_integer_value(k))
      return cap_fail(err, CAP_E_INPUT_INVALID, "%s: shorter than minLength", at);
    if ((k = json_object_get(s, "maxLength")) && n > (size_t)json_integer_value(k))
      return cap_fail(err, CAP_E_INPUT_INVALID, "%s: longer than maxLength", at);
  }
  char sub[512];
  if (json_is_array(v)) {
    size_t n = json_array_size(v);
    if ((k = json_object_get(s, "minItems")) && n < (size_t)json_integer_value(k))
      return cap_fail(err, CAP_E_INPUT_INVALID, "%s: fewer than minItems", at);
    if ((k = json_object_get(s, "maxItems")) && n > (size_t)json_integer_value(k))
      return cap_fail(err, CAP_E_INPUT_INVALID, "%s: more than maxItems", at);
    json_t *items = json_object_get(s, "items"), *e;
    size_t i;
    if (items) json_array_foreach(v, i, e) {
        snprintf(sub, sizeof sub, "%s/%zu", at, i);
        if (validate(items, e, sub, err)) return err->code;
      }
  }
  if (json_is_object(v)) {
    json_t *props = json_object_get(s, "properties"), *req = json_object_get(s, "required");
    json_t *extra = json_object_get(s, "additionalProperties"), *e;
    size_t i;
    json_array_foreach(req, i, e) if (!json_object_get(v, json_string_value(e))) return cap_fail(
        err, CAP_E_INPUT_INVALID, "%s: missing required property \"%s\"", at, json_string_value(e));
    const char *name;
    json_object_foreach((json_t *)v, name, e) {
      snprintf(sub, sizeof sub, "%s/%s", at, name);
      json_t *ps = props ? json_object_get(props, name) : NULL;
      if (ps) {
        if (validate(ps, e, sub, err)) return err->code;
      } else if (json_is_false(extra)) {
        return cap_fail(err, CAP_E_INPUT_INVALID, "%s: property not allowed", sub);
      } else if (json_is_object(extra) && validate(extra, e, sub, err)) {
        return err->code;
      }
    }
  }
  return CAP_OK;
}

cap_code schema_validate(const json_t *schema, const json_t *value, cap_error *err) {
  return validate(schema, value, "input", err);
}
