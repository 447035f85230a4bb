/* The values a signed statement carries, checked against the schema RFC 13
 * defines (issue 47.2: verify used to check a summary's field names, not
 * their values). The rows are statement_schema.c's, the ones the writers
 * build from: each names a field's path, the kind of value it holds, and
 * whether it is required; an object holds exactly the fields its rows
 * name. Then the rules between fields (a summary's result, levels and
 * failure agree). Pure: JSON in, a verdict out. */
#ifndef STATEMENT_VALUES_H
#define STATEMENT_VALUES_H

#include <jansson.h>

#include "cap_error.h"

/* STATEMENT_INVALID naming the field unless every subject has a non-empty
 * printable name, no name appears twice, and its digest is a sha256. */
cap_code statement_values_check_subjects(const json_t *subjects, cap_error *err);
/* STATEMENT_INVALID naming the field unless the predicate of that type
 * (WORLD_PREDICATE_TYPE or VSA_PREDICATE_TYPE) holds exactly the fields
 * its table names, each a value of its kind, and the summary's fields
 * agree with each other. No number anywhere is a fraction or past 2^53. */
cap_code statement_values_check_predicate(const char *predicate_type, const json_t *predicate,
                                          cap_error *err);

#endif
