/* The release statement (docs/RFC.md section 13): an in-toto statement
 * over a source release's files, so that `capsule-host verify --subject`
 * checks this project's own tarball with the format it checks capsules
 * with. Written by `make dist` through `capsule-host sign-release`. */
#ifndef RELEASE_STATEMENT_H
#define RELEASE_STATEMENT_H

#include <jansson.h>

#include "cap_error.h"

/* The environment variable that dates the release (reproducible-builds.org):
 * the predicate's sourceDateEpoch. */
#define RELEASE_EPOCH_ENV "SOURCE_DATE_EPOCH"

/* Hashes file (a regular file, opened without following a link) and writes
 * DIR/NAME.intoto.json, where NAME is file's last component, and with a key
 * (key_path, else $CAPSULE_ATTEST_KEY) NAME.dsse.json and NAME.sigstore.json.
 * USAGE when SOURCE_DATE_EPOCH is unset or not a count of seconds, or file
 * is not a regular file; KEY_INVALID, STATEMENT_DIR_INVALID as attest's
 * statements. *report lists what was written. */
cap_code release_statement_write(const char *file, const char *dir, const char *key_path, json_t **report,
                                 cap_error *err);

#endif
