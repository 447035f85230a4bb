/* in-toto Statement v1 (https://in-toto.io/Statement/v1) and the two
 * predicates this host states (docs/RFC.md section 11): the execution
 * world it attested, and a SLSA Verification Summary per capsule. Pure:
 * building, checking and comparing JSON; no file, no key. */
#ifndef STATEMENT_H
#define STATEMENT_H

#include <jansson.h>
#include <stddef.h>

#include "cap_error.h"
#include "statement_types.h"

/* {"_type", "subject", "predicateType", "predicate"} (steals both). */
json_t *statement_new(json_t *subjects, const char *predicate_type, json_t *predicate);
/* Appends {"name", "digest": {"sha256"}} to subjects. */
void statement_add_subject(json_t *subjects, const char *name, const char *sha256);

/* Reads a statement from a payload: STATEMENT_INVALID unless it is one
 * (strict JSON, exactly its four fields, at least one subject, each named
 * with a sha256), PREDICATE_UNSUPPORTED for a predicateType (or version)
 * this host does not state, STATEMENT_INVALID for a predicate lacking a
 * field its schema requires. */
cap_code statement_read(const unsigned char *payload, size_t len, json_t **statement, cap_error *err);

/* SUBJECT_MISMATCH unless the statement's subjects are exactly `want`
 * (as sets of name and digest), naming the first difference. */
cap_code statement_subjects_match(const json_t *statement, const json_t *want, cap_error *err);

/* SUBJECT_MISMATCH unless one of the statement's subjects is name with
 * that sha256 (verify --subject FILE: FILE's last component). */
cap_code statement_names_subject(const json_t *statement, const char *name, const char *sha256,
                                 cap_error *err);

/* The fields of a world predicate that must not change for the world to
 * be the one attested: every row of statement_schema_world that is compared (all
 * but "observed"), and any field no row names. Appends to drift the
 * path of each field that differs ("node.sha256", "bwrap.path", ...). */
void statement_world_drift(const json_t *attested, const json_t *now, json_t *drift);

#endif
