/* The reference host (host.c): opening it, admitting and activating its
 * capsules, its registry, closing it. */
#ifndef HOST_H
#define HOST_H

#include <jansson.h>

#include "host_state.h"

/* Loads config (NULL: defaults), finds helpers, creates staging. */
cap_code host_open(host *h, const char *config_path, cap_error *err);
/* The static checks of every capsule (root or bundle, manifest, policy,
 * digest, staging, workspace), in order; no code runs. */
cap_code host_admit_capsules(host *h, cap_error *err);
/* Static checks, attestation, one describe cell per capsule; publishes
 * all or nothing. */
cap_code host_activate(host *h, cap_error *err);
/* {"tools":[...], "promptSections":[...]} of an activated host. */
json_t *host_registry(const host *h);
void host_close(host *h);

#endif
