/* The policy's upper bound on a manifest: the capsule id it names, and the
 * tools, prompt sections and workspace reads it allows. A manifest may ask
 * for less, never more. Runs no code and touches no file. */
#ifndef POLICY_H
#define POLICY_H

#include "cap_error.h"

/* Pointers only: declared, not included (C11 allows the repeat). */
typedef struct capsule_config capsule_config;
typedef struct manifest manifest;

/* CAP_OK, or the first of POLICY_ID_MISMATCH, POLICY_TOOL_NOT_ALLOWED,
 * POLICY_PROMPT_NOT_ALLOWED, POLICY_REQUEST_NOT_GRANTED (in that order of
 * checking) naming the entry the policy does not allow. */
cap_code policy_check(const capsule_config *policy, const manifest *m, cap_error *err);

#endif
