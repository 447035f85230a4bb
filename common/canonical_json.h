/* RFC 8785 (JSON Canonicalization Scheme) for the documents this host
 * digests as policies: members sorted, no whitespace, strings escaped as
 * ECMAScript's JSON.stringify does. Two texts of one document (reindented,
 * keys reordered) give the same bytes. */
#ifndef CANONICAL_JSON_H
#define CANONICAL_JSON_H

#include <jansson.h>
#include <stdbool.h>

/* The canonical text of v, malloc'd (NUL-terminated), or NULL: out of
 * memory, or a number that is not an integer within 2^53 (the only
 * numbers a config holds; RFC 8785's form of others is not needed here).
 * Members are sorted by their UTF-8 bytes, which is RFC 8785's UTF-16
 * order for every key below U+E000 (a config's keys are ASCII names). */
char *canonical_json(const json_t *v);

#endif
