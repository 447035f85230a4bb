/* capsule-host new DIR: a capsule that activates as it is, to start from
 * (issue 48.2): a one-tool guest (src/guest.mjs against dsh-capsule-guest,
 * and guest.mjs built: that SDK and it in one file), capsule.json pinned to
 * it, a config that admits it (capsules.json), and package.json whose
 * build script rebuilds with esbuild and pins the digest again. */
#ifndef SCAFFOLD_H
#define SCAFFOLD_H

#include <jansson.h>

#include "cap_error.h"

/* DIR must be new or empty (USAGE otherwise); an absolute, normal path. On
 * failure nothing it wrote is left. */
cap_code scaffold_write(const char *dir, json_t **report, cap_error *err);

#endif
