/* The signed schemas of docs/RFC.md section 13, one table each
 * (statement_schema.c). A row is one field: its path, the kind of value it
 * holds, whether it is required, whether `verify --config` compares it with
 * the world measured now, and where its writer takes its value. The writers
 * build their predicates from these rows (statement_schema_build.c), the reader checks
 * keys and values against them (statement_values.c), and world drift skips
 * the rows that are not compared (statement.c): a new field is one row plus
 * its source. Pure data. */
#ifndef STATEMENT_SCHEMA_H
#define STATEMENT_SCHEMA_H

#include <jansson.h>
#include <stdbool.h>

#include "cap_error.h"

typedef enum {
  V_OBJECT,        /* an object holding exactly the fields its rows name ("*": any name) */
  V_ARRAY,         /* an array; its elements are the row PATH/[] */
  V_NAMES,         /* an array of distinct V_NAMEs */
  V_SHA256,        /* 64 lowercase hex digits */
  V_ABS_PATH,      /* a lexically normal absolute path */
  V_TEXT,          /* a string with no control character (may be empty) */
  V_NAME,          /* a V_TEXT that is not empty */
  V_BOOL,          /* true or false */
  V_COUNT,         /* an integer from 0 to 2^53 */
  V_COUNT_OR_NULL, /* a V_COUNT or null (no limit) */
  V_TIME,          /* RFC 3339 in UTC: 2026-12-03T16:00:00Z, fraction allowed */
  V_FILE_URI,      /* exactly what file_uri writes for an absolute path */
  V_NODE_VERSION,  /* v20.20.2, with a pre-release or build suffix allowed */
  V_SCOPE,         /* "denied" or "allowed" */
  V_CODE,          /* a stable error code of docs/ERRORS.md */
  V_ANY,           /* not checked here (what was observed, never compared) */
} value_kind;

/* Where a writer takes a field's value. SRC_NONE: the row only describes
 * (an object whose members have sources, an array's elements, a value
 * beneath a row that has one). SRC_REPORT: the attestation report (§6) at
 * the row's report path. The others are computed by the predicate's
 * writer: world_predicate.c, statement_write.c (summary), release_statement.c. */
typedef enum {
  SRC_NONE,
  SRC_REPORT,
  SRC_HOST_VERSION,        /* capsule-host's version */
  SRC_HOST_SHA256,         /* the running capsule-host binary's digest */
  SRC_LAUNCHER_SHA256,     /* capsule-launcher's digest */
  SRC_PROBE_SHA256,        /* capsule-probe's digest */
  SRC_NODE_VERSION,        /* the Node version the world probe read */
  SRC_NODE_PATH,           /* the Node executable the host resolved */
  SRC_NODE_SHA256,         /* its digest */
  SRC_NODE_SHARED_OBJECTS, /* each object mounted beside it: dest, path, digest */
  SRC_BWRAP_PATH,          /* the bwrap the host resolved */
  SRC_BWRAP_SHA256,        /* its digest */
  SRC_CELL_OWN_NAMESPACES, /* the namespaces the cell was measured not to share with the host */
  SRC_NODE_IDENTITY,       /* Node by device, inode and mtime */
  SRC_BWRAP_IDENTITY,      /* bwrap by device, inode and mtime */
  SRC_VERIFIER_ID,         /* VSA_VERIFIER_ID */
  SRC_TIME_NOW,            /* the time of writing, RFC 3339 UTC */
  SRC_RESOURCE_URI,        /* the capsule's root or bundle */
  SRC_POLICY_URI,          /* the config */
  SRC_POLICY_SHA256,       /* its canonical digest */
  SRC_INPUT_ATTESTATIONS,  /* the world statement written beside it, if any */
  SRC_RESULT,              /* PASSED or FAILED */
  SRC_LEVELS,              /* the levels that result reaches */
  SRC_FAILURE_CODE,        /* when FAILED: the stable code */
  SRC_FAILURE_MESSAGE,     /* and its message */
  SRC_PRODUCT,             /* "dsh-capsule" */
  SRC_SOURCE_DATE_EPOCH,   /* $SOURCE_DATE_EPOCH */
} value_source;

typedef struct {
  const char *path; /* "/" between names, "*" for any name, "[]" for an element */
  value_kind kind;
  bool required;      /* within its object, when that object stands */
  bool compared;      /* world: verify --config compares it (false for what was observed) */
  value_source from;  /* where its writer takes its value */
  const char *report; /* SRC_REPORT: its path in the attestation report */
} schema_row;

/* Each table ends with a row whose path is NULL. */
extern const schema_row statement_schema_world[];   /* the execution-world predicate */
extern const schema_row statement_schema_summary[]; /* the verification summary (SLSA VSA v1) */
extern const schema_row statement_schema_release[]; /* the release predicate */
extern const schema_row statement_schema_subject[]; /* a statement's subject list */

/* Building a predicate from these rows (statement_schema_build.c), and
 * reaching a field of a JSON document by a row's path. */
/* A field's value for its row: false when the row's source is not one
 * this writer knows; else *value is a new reference, or NULL when the
 * field is absent (it must then be optional, or stand in an optional
 * object). */
typedef bool (*statement_schema_value_fn)(const schema_row *row, void *ctx, json_t **value);
/* A writer's answer for a row it knows: *out = value (NULL: absent), true. */
bool statement_schema_give(json_t **out, json_t *value);

/* Builds *out from every row that has a source, in the table's order,
 * making the objects above each field as they are needed. INTERNAL naming
 * the field when its source is not the writer's (a row added without its
 * source: never silently absent), or a value the schema requires is
 * absent. */
cap_code statement_schema_build(const schema_row *rows, statement_schema_value_fn value, void *ctx,
                                const char *what, json_t **out, cap_error *err);
/* The member of root at a row path ("a/b/c"), or NULL (borrowed). */
json_t *statement_schema_at(const json_t *root, const char *path);
/* Removes the member at a row path, if it stands. */
void statement_schema_remove(json_t *root, const char *path);

#endif
