/* Resource requests (manifest) and grants (policy) share one syntax:
 * {"kind": "workspace-read", "path": "relative/file"}. Only workspace-read
 * exists in protocol v0.1; every other known kind fails closed. */
#ifndef REQUESTS_H
#define REQUESTS_H

#include <jansson.h>

#include "cap_error.h"

/* Validates an array of requests or grants; `syntax_code` is used for
 * malformed entries, REQUEST_UNSUPPORTED for known-but-unsupported kinds,
 * WORKSPACE_PATH_INVALID for a path that is not plain relative. */
cap_code requests_check_list(const json_t *list, const char *what, cap_code syntax_code, cap_error *err);

#endif
