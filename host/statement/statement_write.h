/* Writing the statements (statement_write.c): the execution world and a
 * Verification Summary per capsule as in-toto statements, signed into
 * DSSE envelopes and Sigstore bundles (docs/RFC.md section 13). */
#ifndef STATEMENT_WRITE_H
#define STATEMENT_WRITE_H

#include <jansson.h>
#include <stdbool.h>

#include "cap_error.h"

/* Pointers only: declared, not included (C11 allows the repeat). */
typedef struct host host;
typedef struct loaded_capsule loaded_capsule;
typedef struct signing_key signing_key;

/* Before activation, so that nothing is activated whose statements cannot
 * be written: the key (if any) is usable (else KEY_INVALID), and --statement
 * DIR is a directory (created 0755 if missing) not reached through a
 * symbolic link (else STATEMENT_DIR_INVALID). */
cap_code statement_write_preflight(const host *h, cap_error *err);
/* Writes to dir world.intoto.json and vsa-<capsule id>.intoto.json (the
 * statements), and with a key each one's .dsse.json (envelope) and
 * .sigstore.json (bundle). outcome is activation's: CAP_OK gives PASSED
 * verification summaries, anything else FAILED with that code. *report
 * lists what was written and whether it is signed. */
cap_code statement_write_to(host *h, const char *dir, const signing_key *key, cap_code outcome,
                            const cap_error *why, json_t **report, cap_error *err);
/* statement_write_to to h->statement_dir, signed with h->statement_key or
 * $CAPSULE_ATTEST_KEY, else unsigned and saying so on stderr, where the
 * report goes too. */
cap_code statement_write(host *h, cap_code outcome, const cap_error *why, cap_error *err);

/* The pieces, for the release statement (release_statement.c) too. */
/* DIR, made 0755 if missing, opened O_PATH without following a link at
 * any step it makes; -1 with STATEMENT_DIR_INVALID. */
int statement_write_open_dir(const char *dir, cap_error *err);
/* stem.intoto.json (the statement, which this steals), and with a key
 * stem.dsse.json and stem.sigstore.json, each written whole or not at all;
 * appends the names written to files; hex gets the payload's digest. */
cap_code statement_write_one(int dirfd, const char *stem, json_t *statement, const signing_key *key,
                             json_t *files, char hex[65], cap_error *err);

#endif
