/* The inputSchema subset the host can enforce itself. A guest schema using
 * any other keyword is refused: the host never publishes a schema it cannot
 * check, and tool input is validated before a cell starts. */
#ifndef SCHEMA_H
#define SCHEMA_H

#include <jansson.h>

#include "cap_error.h"

/* Checks that schema uses only supported keywords with well-formed values;
 * the top level must be {"type": "object", ...}. */
cap_code schema_check(const json_t *schema, cap_error *err);
/* Validates value against a schema that passed schema_check. */
cap_code schema_validate(const json_t *schema, const json_t *value, cap_error *err);

#endif
