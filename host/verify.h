/* `capsule-host verify` (verify.c). */
#ifndef VERIFY_H
#define VERIFY_H

#include <jansson.h>

#include "cap_error.h"

/* The envelope or bundle at path against
 * the public key; with config, its subjects against the capsules the
 * config admits here, and (a world statement) the world of this machine,
 * attested again, against the signed one, field by field (WORLD_DRIFT
 * names them). */
cap_code verify_attestation(const char *path, const char *public_key, const char *config,
                                 json_t **report, cap_error *err);

#endif
