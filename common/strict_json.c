#include "strict_json.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* jansson allocates through these. While sj_parse runs, a budget derived
 * from the node limit bounds the bytes the parse may allocate (counted as
 * they are allocated, frees not credited: no header, so memory jansson
 * hands out stays plain malloc memory that free() takes), so a frame of
 * many small values is refused while it is parsed, not after its tree has
 * filled the host's memory (jansson has no node limit of its own). */
static struct {
  bool on, exceeded;
  size_t left;
} budget;

/* Past the budget the allocation still succeeds: a NULL sends jansson
 * 2.14 down error paths that free a wild pointer (found by
 * fuzz_cell_reports). The parse is stopped by its reader instead. */
static void *budget_malloc(size_t n) {
  if (budget.on) {
    if (n > budget.left) {
      budget.exceeded = true;
      budget.left = 0;
    } else {
      budget.left -= n;
    }
  }
  return malloc(n);
}

/* jansson's input, handed over in its own chunks (at most 1 KiB each): once
 * the budget is exceeded the next read is an error, which ends the parse on
 * jansson's ordinary failure path. Past the budget it allocates for at most
 * one chunk of input. */
typedef struct {
  const char *buf;
  size_t len, off;
} budget_reader;

static size_t read_within_budget(void *out, size_t size, void *data) {
  budget_reader *r = data;
  if (budget.exceeded) return (size_t)-1;
  size_t n = r->len - r->off < size ? r->len - r->off : size;
  memcpy(out, r->buf + r->off, n);
  r->off += n;
  return n;
}

/* Before main, so that one allocator serves every jansson allocation. */
__attribute__((constructor)) static void install_budget_allocator(void) {
  json_set_alloc_funcs(budget_malloc, free);
}

json_t *sj_load_bounded(const char *buf, size_t len, size_t flags, size_t budget_bytes, bool *exceeded,
                        json_error_t *jerr) {
  budget.on = true;
  budget.exceeded = false;
  budget.left = budget_bytes;
  budget_reader reader = {buf, len, 0};
  json_t *v = json_load_callback(read_within_budget, &reader, flags, jerr);
  *exceeded = budget.exceeded;
  budget.on = false;
  if (*exceeded) {
    json_decref(v);
    return NULL;
  }
  return v;
}

size_t sj_parse_budget(size_t len, const sj_limits *lim) {
  return lim->max_nodes * SJ_BYTES_PER_NODE + 4 * len + 65536;
}

static void measure(const json_t *v, size_t level, size_t *depth, size_t *nodes) {
  (*nodes)++;
  if (level > *depth) *depth = level;
  if (json_is_object(v)) {
    const char *k;
    json_t *child;
    json_object_foreach((json_t *)v, k, child) measure(child, level + 1, depth, nodes);
  } else if (json_is_array(v)) {
    size_t i;
    json_t *child;
    json_array_foreach(v, i, child) measure(child, level + 1, depth, nodes);
  }
}

void sj_measure(const json_t *v, size_t *depth, size_t *nodes) {
  *depth = 0;
  *nodes = 0;
  measure(v, 1, depth, nodes);
}

bool sj_within(const json_t *v, const sj_limits *lim) {
  size_t depth, nodes;
  sj_measure(v, &depth, &nodes);
  return depth <= lim->max_depth && nodes <= lim->max_nodes;
}

json_t *sj_parse(const char *buf, size_t len, const sj_limits *lim, cap_code syntax_code, const char *what,
                 cap_error *err) {
  json_error_t jerr;
  /* jansson 2.14 drops a raw NUL right after a number or literal (123<NUL>
   * parses): no NUL byte reaches it, so no two readers disagree. */
  const char *nul = memchr(buf, '\0', len);
  if (nul) {
    cap_fail(err, syntax_code, "%s is not strict JSON: NUL byte at byte %zu", what, (size_t)(nul - buf));
    return NULL;
  }
  /* jansson refuses "\u0000" unless JSON_ALLOW_NUL is given, and invalid
   * UTF-8 always. JSON_DECODE_ANY: scalars parse so callers can say why
   * they are wrong. */
  bool exceeded;
  json_t *v = sj_load_bounded(buf, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, sj_parse_budget(len, lim),
                              &exceeded, &jerr);
  if (exceeded) {
    cap_fail(err, CAP_E_JSON_LIMIT,
             "%s exceeds JSON limits while parsing: more memory than %zu nodes may take "
             "(max %zu nodes)",
             what, lim->max_nodes, lim->max_nodes);
    return NULL;
  }
  if (!v) {
    cap_fail(err, syntax_code, "%s is not strict JSON: %s at byte %d", what, jerr.text, jerr.position);
    return NULL;
  }
  size_t depth, nodes;
  sj_measure(v, &depth, &nodes);
  if (depth > lim->max_depth || nodes > lim->max_nodes) {
    cap_fail(err, CAP_E_JSON_LIMIT, "%s exceeds JSON limits: depth %zu (max %zu), nodes %zu (max %zu)", what,
             depth, lim->max_depth, nodes, lim->max_nodes);
    json_decref(v);
    return NULL;
  }
  return v;
}

static bool in_list(const char *key, const char *const *list) {
  for (; list && *list; list++)
    if (strcmp(key, *list) == 0) return true;
  return false;
}

bool sj_keys(const json_t *obj, const char *const *allowed, const char *const *required, cap_code code,
             const char *what, cap_error *err) {
  if (!json_is_object(obj)) {
    cap_fail(err, code, "%s must be a JSON object", what);
    return false;
  }
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)obj, k, v) {
    if (!in_list(k, allowed)) {
      cap_fail(err, code, "%s has unknown field \"%s\"", what, k);
      return false;
    }
  }
  for (; required && *required; required++) {
    if (!json_object_get(obj, *required)) {
      cap_fail(err, code, "%s is missing required field \"%s\"", what, *required);
      return false;
    }
  }
  return true;
}

bool sj_opt_string(const json_t *obj, const char *key, const char **out, cap_code code, const char *what,
                   cap_error *err) {
  json_t *v = json_object_get(obj, key);
  if (!v) return true;
  if (!json_is_string(v)) {
    cap_fail(err, code, "%s.%s must be a string", what, key);
    return false;
  }
  *out = json_string_value(v);
  return true;
}

bool sj_string(const json_t *obj, const char *key, const char **out, cap_code code, const char *what,
               cap_error *err) {
  if (!json_object_get(obj, key)) {
    cap_fail(err, code, "%s.%s is required", what, key);
    return false;
  }
  return sj_opt_string(obj, key, out, code, what, err);
}

bool sj_opt_uint(const json_t *obj, const char *key, long long min, long long max, long long *out,
                 cap_code code, const char *what, cap_error *err) {
  json_t *v = json_object_get(obj, key);
  if (!v) return true;
  if (!json_is_integer(v)) {
    cap_fail(err, code, "%s.%s must be an integer", what, key);
    return false;
  }
  long long n = json_integer_value(v);
  if (n < min || n > max) {
    cap_fail(err, code, "%s.%s must be between %lld and %lld, got %lld", what, key, min, max, n);
    return false;
  }
  *out = n;
  return true;
}

bool sj_array(const json_t *obj, const char *key, json_t **out, cap_code code, const char *what,
              cap_error *err) {
  json_t *v = json_object_get(obj, key);
  if (!json_is_array(v)) {
    cap_fail(err, code, "%s.%s must be an array", what, key);
    return false;
  }
  *out = v;
  return true;
}

char *sj_canonical(const json_t *v) {
  return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

json_t *sj_parse_as(const char *buf, size_t len, const sj_limits *lim, cap_code code, const char *what,
                    cap_error *err) {
  cap_error inner = {0};
  json_t *v = sj_parse(buf, len, lim, code, what, &inner);
  if (!v) cap_fail(err, code, "%s", inner.message);
  return v;
}

bool sj_array_has_string(const json_t *arr, const char *s) {
  size_t i;
  json_t *v;
  json_array_foreach(arr, i, v) if (json_is_string(v) && strcmp(json_string_value(v), s) == 0) return true;
  return false;
}
