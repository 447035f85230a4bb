#include "canonical_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_key(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void string_out(FILE *out, const char *s, size_t len) {
  fputc('"', out);
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    switch (c) {
      case '"': fputs("\\\"", out); break;
      case '\\': fputs("\\\\", out); break;
      case '\b': fputs("\\b", out); break;
      case '\f': fputs("\\f", out); break;
      case '\n': fputs("\\n", out); break;
      case '\r': fputs("\\r", out); break;
      case '\t': fputs("\\t", out); break;
      default:
        if (c < 0x20)
          fprintf(out, "\\u%04x", c);
        else
          fputc(c, out);
    }
  }
  fputc('"', out);
}

static bool value_out(FILE *out, const json_t *v) {
  if (json_is_object(v)) {
    size_t n = json_object_size(v), i = 0;
    const char **keys = malloc((n ? n : 1) * sizeof *keys);
    if (!keys) return false;
    const char *k;
    json_t *m;
    json_object_foreach((json_t *)v, k, m) keys[i++] = k;
    qsort(keys, n, sizeof *keys, by_key);
    fputc('{', out);
    bool ok = true;
    for (i = 0; ok && i < n; i++) {
      if (i) fputc(',', out);
      string_out(out, keys[i], strlen(keys[i]));
      fputc(':', out);
      ok = value_out(out, json_object_get(v, keys[i]));
    }
    fputc('}', out);
    free(keys);
    return ok;
  }
  if (json_is_array(v)) {
    fputc('[', out);
    for (size_t i = 0; i < json_array_size(v); i++) {
      if (i) fputc(',', out);
      if (!value_out(out, json_array_get(v, i))) return false;
    }
    fputc(']', out);
    return true;
  }
  if (json_is_string(v)) {
    string_out(out, json_string_value(v), json_string_length(v));
    return true;
  }
  if (json_is_integer(v)) {
    json_int_t n = json_integer_value(v);
    if (n > (1LL << 53) || n < -(1LL << 53)) return false;
    fprintf(out, "%lld", (long long)n);
    return true;
  }
  if (json_is_true(v)) return fputs("true", out) >= 0;
  if (json_is_false(v)) return fputs("false", out) >= 0;
  if (json_is_null(v)) return fputs("null", out) >= 0;
  return false; /* a fraction: not in any config */
}

char *canonical_json(const json_t *v) {
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  if (!out) return NULL;
  bool ok = value_out(out, v);
  if (fclose(out) != 0 || !ok) {
    free(text);
    return NULL;
  }
  return text;
}
