#include "jsonrpc_id.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "strict_json.h"

static int hex_value(const char *p) {
  int v = 0;
  for (int i = 0; i < 4; i++) {
    char c = p[i];
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

/* Finds the escapes jansson refuses although JSON allows them ("\u0000"
 * and lone surrogates); with out (a copy of s), rewrites them there, at
 * the same length, into "\ufffd". Only escape sequences are looked at (a
 * backslash outside a string is a syntax error either way); returns
 * whether there was anything to rewrite. */
static bool neutralise_escapes(const char *s, char *out, size_t len) {
  bool found = false;
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
      if (!out) return true;
      memcpy(out + i, "\\ufffd", 6);
      found = true;
    }
    i += 5;
  }
  return found;
}

/* The string token that starts at s[at], decoded by jansson, or NULL. */
static json_t *string_at(const char *s, size_t len, size_t at) {
  if (at >= len || s[at] != '"') return NULL;
  size_t i = at + 1;
  for (; i < len && s[i] != '"'; i++)
    if (s[i] == '\\') i++;
  if (i >= len) return NULL;
  return json_loadb(s + at, i + 1 - at, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
}

/* The members of the top-level object named `name`: how many there are,
 * where the last one's value starts, and whether any of them is the
 * string `equals` (NULL: not asked). Runs only on text jansson has just
 * parsed, so the lexical rules are simple: outside strings, brackets nest;
 * inside the top object a string right after "{" or "," is a key. Each key
 * is decoded by jansson, so "\u0069d" counts. */
static size_t top_level_members(const char *s, size_t len, const char *name, size_t *value_at,
                                const char *equals, bool *any_equal) {
  size_t depth = 0, count = 0, name_len = strlen(name);
  bool want_key = false;
  for (size_t i = 0; i < len; i++) {
    char c = s[i];
    if (c == '"') {
      size_t start = i;
      for (i++; i < len && s[i] != '"'; i++)
        if (s[i] == '\\') i++;
      if (depth == 1 && want_key) {
        json_t *key = json_loadb(s + start, i + 1 - start, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
        if (json_is_string(key) && json_string_length(key) == name_len &&
            memcmp(json_string_value(key), name, name_len) == 0) {
          count++;
          size_t v = i + 1;
          while (v < len && (strchr(" \t\r\n", s[v]) || s[v] == ':')) v++;
          *value_at = v;
          json_t *value = equals ? string_at(s, len, v) : NULL;
          if (json_is_string(value) && strcmp(json_string_value(value), equals) == 0) *any_equal = true;
          json_decref(value);
        }
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

/* A numeric id is given back only as the very text the client sent: an
 * integer jansson reads exactly and writes back the same. 1.0, -0, 1e2 or
 * 9007199254740993 read as a real would come back as another id, which
 * may be a call in flight's: those get null. */
static json_t *exact_integer(const char *s, size_t len, size_t at) {
  size_t end = at;
  while (end < len && strchr("-+.eE0123456789", s[end])) end++;
  if (end == at || end - at > 24) return NULL;
  json_t *n = json_loadb(s + at, end - at, JSON_DECODE_ANY, NULL);
  char *again = json_is_integer(n) ? json_dumps(n, JSON_ENCODE_ANY) : NULL;
  bool exact = again && strlen(again) == end - at && memcmp(again, s + at, end - at) == 0;
  free(again);
  if (exact) return n;
  json_decref(n);
  return NULL;
}

/* An id as the request carried it: a string, or an integer given back as
 * the same text. */
static json_t *usable_id(json_t *id, bool rewritten, const char *line, size_t len, size_t at) {
  if (json_is_string(id)) {
    /* A string that held a rewritten escape is not the client's id. */
    if (rewritten && strstr(json_string_value(id), "\xef\xbf\xbd")) return NULL;
    return json_incref(id);
  }
  return json_is_number(id) ? exact_integer(line, len, at) : NULL;
}

/* One parse, every integer read as a real (so that a number past int64
 * elsewhere in the line is no reason to lose the id), within the budget
 * the strict parse had: the recovery costs no more than the parse it
 * follows, plus the line's copy when an escape must be rewritten (C20). */
jsonrpc_refused jsonrpc_id_recover_refused(const char *line, size_t len, size_t budget_bytes) {
  jsonrpc_refused r = {0};
  if (len == 0 || memchr(line, '\0', len)) return r; /* a raw NUL: not JSON */
  /* A copy only when there is something to rewrite. */
  bool rewritten = neutralise_escapes(line, NULL, len), exceeded;
  char *copy = rewritten ? malloc(len) : NULL;
  if (rewritten && !copy) return r;
  if (copy) {
    memcpy(copy, line, len);
    neutralise_escapes(line, copy, len);
  }
  const char *text = copy ? copy : line;
  json_error_t jerr;
  json_t *msg =
      sj_load_bounded(text, len, JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, budget_bytes, &exceeded, &jerr);
  if (json_is_object(msg)) {
    size_t at = 0;
    if (top_level_members(text, len, "id", &at, NULL, NULL) == 1)
      r.id = usable_id(json_object_get(msg, "id"), rewritten, text, len, at);
    /* Any "method" member that says tools/call makes it one (C19): two
     * methods must not hide a call from the log. */
    top_level_members(text, len, "method", &at, "tools/call", &r.tools_call);
    json_t *name = json_object_get(json_object_get(msg, "params"), "name");
    if (r.tools_call && json_is_string(name)) r.tool = json_incref(name);
  }
  free(copy);
  json_decref(msg);
  return r;
}

json_t *jsonrpc_id_recover(const char *line, size_t len, size_t budget_bytes) {
  jsonrpc_refused r = jsonrpc_id_recover_refused(line, len, budget_bytes);
  json_decref(r.tool);
  return r.id;
}

void jsonrpc_id_refused_free(jsonrpc_refused *r) {
  json_decref(r->id);
  json_decref(r->tool);
  r->id = NULL;
  r->tool = NULL;
}
