/* Attestations a reviewer can verify (docs/RFC.md section 13): the
 * execution world and a Verification Summary per capsule as in-toto
 * statements, signed into DSSE envelopes and Sigstore bundles
 * (attestation_write.c) and the world predicate of this host
 * (world_predicate.c). `capsule-host verify` is host/verify.c. */
#ifndef ATTESTATION_H
#define ATTESTATION_H

#include <jansson.h>
#include <stdbool.h>

#include "cap_error.h"

typedef struct host host;
typedef struct loaded_capsule loaded_capsule;
typedef struct signing_key signing_key;

/* The world predicate of an attested host: its pinned fields (the
 * capsule-host binary, Node and its shared objects and bwrap by path and
 * content digest, node flags, loader and seccomp digests, ceilings, the
 * cell's world) and what it observed besides ("observed": identities by
 * inode, namespaces, the snapshot's state). */
cap_code world_predicate(const host *h, json_t **predicate, cap_error *err);
/* A capsule's subjects: its artifact, its manifest, its bundle if any
 * (each whose digest is known), named under its manifest id, or under id. */
void capsule_subjects(const loaded_capsule *cap, json_t *subjects);
void capsule_subjects_as(const loaded_capsule *cap, const char *id, json_t *subjects);
/* Every admitted capsule's subjects, or (no capsule) capsule-host itself. */
cap_code world_subjects(const host *h, json_t **subjects, cap_error *err);
/* SHA-256 of the running capsule-host binary. */
cap_code host_binary_digest(char hex[65], cap_error *err);

/* Before activation, so that nothing is activated whose statements cannot
 * be written: the key (if any) is usable (else KEY_INVALID), and --statement
 * DIR is a directory (created 0755 if missing) not reached through a
 * symbolic link (else STATEMENT_DIR_INVALID). */
cap_code statements_preflight(const host *h, cap_error *err);
/* Writes to dir world.intoto.json and vsa-<capsule id>.intoto.json (the
 * statements), and with a key each one's .dsse.json (envelope) and
 * .sigstore.json (bundle). outcome is activation's: CAP_OK gives PASSED
 * verification summaries, anything else FAILED with that code. *report
 * lists what was written and whether it is signed. */
cap_code attestation_write(host *h, const char *dir, const signing_key *key, cap_code outcome,
                           const cap_error *why, json_t **report, cap_error *err);
/* attestation_write to h->statement_dir, signed with h->statement_key or
 * $CAPSULE_ATTEST_KEY, else unsigned and saying so on stderr, where the
 * report goes too. */
cap_code statements_write(host *h, cap_code outcome, const cap_error *why, cap_error *err);

#endif
