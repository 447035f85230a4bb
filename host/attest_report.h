/* Validation of attestation reports (world probe and cell probe). */
#ifndef ATTEST_REPORT_H
#define ATTEST_REPORT_H

#include <jansson.h>

#include "cap_error.h"
#include "host.h"

/* A world report must echo the challenge and match the host's view:
 * its identities in h and its world in mine (runtime_world_json()). */
cap_code attest_check_world(const host *h, const json_t *mine, const json_t *report,
                            const char *challenge, cap_error *err);
/* A cell report must echo the challenge, run the attested Node from
 * /runtime/node, load only mounted objects and have the permission model. */
cap_code attest_check_cell(const host *h, const json_t *report, const char *challenge,
                           cap_error *err);

#endif
