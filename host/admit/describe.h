/* Admission of a describe.result: it must match the manifest exactly and
 * fit every deployment limit before anything is published. */
#ifndef DESCRIBE_H
#define DESCRIBE_H

#include <jansson.h>

#include "cap_error.h"

/* Pointers only: declared, not included (C11 allows the repeat). */
typedef struct host_limits host_limits;
typedef struct manifest manifest;

/* On success *descriptor holds {tools:[...], promptSections:[...]} (a new
 * reference), the immutable form compared again in every call cell. */
cap_code describe_admit(const json_t *reply, const manifest *m, const host_limits *lim, json_t **descriptor,
                        cap_error *err);

#endif
