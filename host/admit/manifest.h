/* capsule.json: read and validated without executing anything. */
#ifndef MANIFEST_H
#define MANIFEST_H

#include <jansson.h>

#include "cap_error.h"

/* Pointers only: declared, not included (C11 allows the repeat). */
typedef struct sj_limits sj_limits;

#define MANIFEST_PROTOCOL "dsh-capsule/0"

typedef struct manifest {
  json_t *json; /* owns all strings */
  const char *id;
  const char *entry; /* relative to the capsule root, "./" stripped */
  const char *sha256;
  json_t *tools;           /* array of unique tool names */
  json_t *prompt_sections; /* array of unique section ids */
  json_t *requests;        /* array of {kind, path} */
} manifest;

/* Validates manifest text (already size-checked by the caller). */
cap_code manifest_parse(const char *text, size_t len, const sj_limits *lim, long long max_contributions,
                        manifest *m, cap_error *err);
void manifest_free(manifest *m);

#endif
