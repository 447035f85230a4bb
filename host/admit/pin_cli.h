/* capsule-host pin DIR: the artifact's digest written into capsule.json. */
#ifndef PIN_CLI_H
#define PIN_CLI_H

#include <jansson.h>

#include "cap_error.h"

typedef struct host_limits host_limits;

/* Reads DIR/capsule.json and the artifact it names (as admission reads
 * them, within lim), and when the pinned digest differs from the
 * artifact's, rewrites capsule.json with the new one (a new file renamed
 * over the old, never through a link). The report names both digests. */
cap_code pin_cli_run(const char *dir, const host_limits *lim, json_t **report, cap_error *err);

#endif
