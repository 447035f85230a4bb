/* Strict JSON on top of jansson: duplicate keys, NUL bytes (raw or
 * escaped), invalid UTF-8, lone surrogate escapes and integers outside
 * int64 are refused; memory is bounded while parsing (a budget derived from
 * the node limit) and depth and node counts exactly after; objects are
 * checked against an exact key set. */
#ifndef STRICT_JSON_H
#define STRICT_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "cap_error.h"

typedef struct sj_limits {
  size_t max_depth; /* a scalar at top level has depth 1 */
  size_t max_nodes; /* every value counts, keys do not */
} sj_limits;

/* The most one parse of len bytes may hold: generous for any document
 * within max_nodes (jansson's largest node, an empty object with its hash
 * table, takes about 250 bytes here), small beside the tree a flood of
 * empty objects would build. */
#define SJ_BYTES_PER_NODE 512u
size_t sj_parse_budget(size_t len, const sj_limits *lim);
/* json_loadb allocating at most budget_bytes (cumulative): NULL with
 * *exceeded set when the parse would need more. */
json_t *sj_load_bounded(const char *buf, size_t len, size_t flags, size_t budget_bytes, bool *exceeded,
                        json_error_t *jerr);

/* Parses exactly one JSON value from buf (no trailing bytes). On a syntax
 * error returns NULL with syntax_code; on a limit breach returns NULL with
 * CAP_E_JSON_LIMIT. `what` names the document in messages. */
json_t *sj_parse(const char *buf, size_t len, const sj_limits *lim, cap_code syntax_code, const char *what,
                 cap_error *err);

/* sj_parse for documents whose every failure has one code (config, launch
 * document): syntax errors and limit breaches alike fail with `code`. */
json_t *sj_parse_as(const char *buf, size_t len, const sj_limits *lim, cap_code code, const char *what,
                    cap_error *err);

/* True when arr (a JSON array) holds the string s. */
bool sj_array_has_string(const json_t *arr, const char *s);

/* Counts nodes and depth of an already parsed value. */
void sj_measure(const json_t *v, size_t *depth, size_t *nodes);
bool sj_within(const json_t *v, const sj_limits *lim);

/* Fails unless obj is an object whose keys are all in `allowed` (NULL
 * terminated) and which contains every key in `required`. */
bool sj_keys(const json_t *obj, const char *const *allowed, const char *const *required, cap_code code,
             const char *what, cap_error *err);

/* Typed getters that fail with `code` naming `what.key`. Optional getters
 * leave *out untouched when the key is absent. */
bool sj_string(const json_t *obj, const char *key, const char **out, cap_code code, const char *what,
               cap_error *err);
bool sj_opt_string(const json_t *obj, const char *key, const char **out, cap_code code, const char *what,
                   cap_error *err);
bool sj_opt_uint(const json_t *obj, const char *key, long long min, long long max, long long *out,
                 cap_code code, const char *what, cap_error *err);
bool sj_array(const json_t *obj, const char *key, json_t **out, cap_code code, const char *what,
              cap_error *err);

/* Canonical compact encoding with sorted keys; caller frees. Used to compare
 * descriptors byte for byte. */
char *sj_canonical(const json_t *v);

#endif
