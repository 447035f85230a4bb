/* The reference host's state, which every layer is handed: its
 * configuration, trusted helpers, runtime view, staging, attestation and
 * activated capsules. What it does with them is host.h. */
#ifndef HOST_STATE_H
#define HOST_STATE_H

#include <jansson.h>
#include <stdbool.h>

#include "admit/config.h"
#include "admit/staging.h"
#include "runtime_scan.h"

/* Pointers only: declared, not included (C11 allows the repeat). */
typedef struct loaded_capsule loaded_capsule;

typedef struct host {
  host_config cfg;
  char launcher[4096];
  char probe[4096];
  file_identity bwrap;
  runtime_view node;
  staging stg;
  staged_file loader;       /* host/cell/cell-loader.cjs, every cell's entry */
  staged_file attest_guest; /* the never-loaded guest of an attestation-only cell */
  staged_file snapshot;     /* startup snapshot; path[0] == 0 while there is none */
  char node_version[64];
  char seccomp_sha256[65];
  const char *permission_flag;
  bool disable_sigusr1;
  long long node_reserved_data_mb; /* added to maxCellMemoryMb (node_version.h) */
  json_t *attesting;               /* the report between the world and the cell phase */
  json_t *attestation;
  loaded_capsule *caps;
  size_t cap_count;
  bool activated;
  json_t *timings; /* phase timings (ms) of the last activation and call */
  /* --statement DIR and --key FILE (NULL: $CAPSULE_ATTEST_KEY, or unsigned);
   * serve restates the world there when its startup snapshot changes it. */
  const char *statement_dir, *statement_key;
} host;

#endif
