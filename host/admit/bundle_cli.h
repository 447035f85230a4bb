/* capsule-host pack / inspect. */
#ifndef BUNDLE_CLI_H
#define BUNDLE_CLI_H

#include <jansson.h>

#include "cap_error.h"

/* Pointers only: declared, not included (C11 allows the repeat). */
typedef struct host_limits host_limits;
typedef struct capsule_config capsule_config;

/* Validates DIR (manifest, entry, digest) and writes a deterministic bundle. */
cap_code bundle_cli_pack(const char *dir, const char *out_path, const host_limits *lim, json_t **report,
                         cap_error *err);
/* Reads a bundle without executing anything: manifest, digest check,
 * contributions and requests. */
cap_code bundle_cli_inspect(const char *path, const host_limits *lim, json_t **report, cap_error *err);

#endif
