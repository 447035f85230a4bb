#include "jsonrpc_id.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "strict_json.h"

static int hex_value(const char *p) {
  int v = 0;
  for (int i = 0; i < 4; i++) {
    char c = p[i];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

/* Rewrites, in place and at the same length, the escapes jansson refuses
 * although JSON allows them ("\u0000" and lone surrogates) into "\ufffd".
 * Only escape sequences are looked at (a backslash outside a string is a
 * syntax error either way); returns whether anything was rewritten. */
static bool neutralise_escapes(char *s, size_t len) {
  bool changed = false;
  for (size_t i = 0; i + 1 < len; i++) {
    if (s[i] != '\\') continue;
    if (s[i + 1] != 'u' || i + 6 > len) {
      i++; /* a two-character escape, "\\" among them */
      continue;
    }
    int v = hex_value(s + i + 2);
    bool high = v >= 0xd800 && v <= 0xdbff, low = v >= 0xdc00 && v <= 0xdfff;
    if (high && i + 12 <= len && s[i + 6] == '\\' && s[i + 7] == 'u') {
      int w = hex_value(s + i + 8);
      if (w >= 0xdc00 && w <= 0xdfff) {
        i += 11; /* a valid pair */
        continue;
      }
    }
    if (v == 0 || high || low) {
      memcpy(s + i, "\\ufffd", 6);
      changed = true;
    }
    i += 5;
  }
  return changed;
}

/* How many members of the top-level object are named "id". Runs only on
 * text jansson has just parsed, so the lexical rules are simple: outside
 * strings, brackets nest; inside the top object a string right after "{"
 * or "," is a key. Each key is decoded by jansson, so "\u0069d" counts. */
static size_t top_level_ids(const char *s, size_t len) {
  size_t depth = 0, count = 0;
  bool want_key = false;
  for (size_t i = 0; i < len; i++) {
    char c = s[i];
    if (c == '"') {
      size_t start = i;
      for (i++; i < len && s[i] != '"'; i++)
        if (s[i] == '\\') i++;
      if (depth == 1 && want_key) {
        json_t *key = json_loadb(s + start, i + 1 - start, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
        if (json_is_string(key) && json_string_length(key) == 2 &&
            memcmp(json_string_value(key), "id", 2) == 0)
          count++;
        json_decref(key);
        want_key = false;
      }
    } else if (c == '{' || c == '[') {
      depth++;
      want_key = depth == 1 && c == '{';
    } else if (c == '}' || c == ']') {
      depth--;
    } else if (c == ',' && depth == 1) {
      want_key = true;
    }
  }
  return count;
}

/* An id as the request carried it: a string, or an integer (read as a
 * real when the line held an integer outside int64: exact up to 2^53). */
static json_t *usable_id(json_t *id, bool rewritten) {
  if (json_is_string(id)) {
    /* A string that held a rewritten escape is not the client's id. */
    if (rewritten && strstr(json_string_value(id), "\xef\xbf\xbd")) return NULL;
    return json_incref(id);
  }
  if (json_is_integer(id)) return json_incref(id);
  double d = json_is_real(id) ? json_real_value(id) : NAN;
  if (isfinite(d) && d == floor(d) && fabs(d) <= 9007199254740992.0)
    return json_integer((json_int_t)d);
  return NULL;
}

json_t *jsonrpc_recover_id(const char *line, size_t len, size_t budget_bytes) {
  if (len == 0 || memchr(line, '\0', len)) return NULL; /* a raw NUL: not JSON */
  char *copy = malloc(len);
  if (!copy) return NULL;
  memcpy(copy, line, len);
  bool rewritten = neutralise_escapes(copy, len), exceeded;
  json_error_t jerr;
  json_t *msg = sj_load_bounded(copy, len, JSON_ALLOW_NUL, budget_bytes, &exceeded, &jerr);
  if (!msg && !exceeded) /* an integer outside int64: every integer as a real */
    msg = sj_load_bounded(copy, len, JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, budget_bytes,
                          &exceeded, &jerr);
  json_t *id = json_is_object(msg) && top_level_ids(copy, len) == 1
                   ? usable_id(json_object_get(msg, "id"), rewritten)
                   : NULL;
  free(copy);
  json_decref(msg);
  return id;
}
