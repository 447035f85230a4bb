/* Admission of a call.result frame from a guest. */
#ifndef CALL_RESULT_H
#define CALL_RESULT_H

#include <jansson.h>

#include "cap_error.h"

/* Pointers only: declared, not included (C11 allows the repeat). */
typedef struct host_limits host_limits;

/* *result becomes {"isError": false, "output": ...} or
 * {"isError": true, "message": ...}. */
cap_code call_result_admit(const json_t *reply, const host_limits *lim, json_t **result, cap_error *err);

#endif
