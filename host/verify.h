/* `capsule-host verify` (verify.c). */
#ifndef VERIFY_H
#define VERIFY_H

#include <jansson.h>

#include "cap_error.h"

/* The envelope or bundle at path against
 * the public key; with config, its subjects against the capsules the
 * config admits here, and (a world statement) the world of this machine,
 * attested again, against the signed one, field by field (WORLD_DRIFT
 * names them). With subject_file, that file (by its last component and
 * SHA-256) is one of the subjects: how a release tarball is checked. */
cap_code verify_attestation(const char *path, const char *public_key, const char *config,
                            const char *subject_file, json_t **report, cap_error *err);

#endif
