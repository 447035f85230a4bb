/* The reference host: configuration, trusted helpers, runtime view,
 * staging, attestation and the activated capsules. */
#ifndef HOST_H
#define HOST_H

#include <jansson.h>
#include <stdbool.h>

#include "admit/config.h"
#include "runtime_scan.h"
#include "admit/staging.h"

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
  json_t *attesting;   /* the report between the world and the cell phase */
  json_t *attestation;
  loaded_capsule *caps;
  size_t cap_count;
  bool activated;
  json_t *timings; /* phase timings (ms) of the last activation and call */
  /* --statement DIR and --key FILE (NULL: $CAPSULE_ATTEST_KEY, or unsigned);
   * serve restates the world there when its startup snapshot changes it. */
  const char *statement_dir, *statement_key;
} host;

/* Loads config (NULL: defaults), finds helpers, creates staging. */
cap_code host_open(host *h, const char *config_path, cap_error *err);
/* Resolves node and bwrap and runs both attestation phases, the cell phase
 * in an attestation-only cell. */
cap_code host_attest(host *h, cap_error *err);
/* The two phases apart (attest.c): the world phase (and staging of the
 * loader), then the cell phase on a started cell whose loader has not
 * loaded its guest: activation probes in the first capsule's describe cell. */
struct cell;
cap_code host_attest_world(host *h, cap_error *err);
cap_code host_attest_cell(host *h, struct cell *c, cap_error *err);
/* The cell phase in a cell whose guest is never loaded (`attest`, `doctor`):
 * probe, shut down, join, publish. */
cap_code host_attest_only_cell(host *h, cap_error *err);
/* The cell phase without publishing: fills report (its cell, namespaces,
 * node flags, digests, ceilings), in a started cell c whose loader waits,
 * or in an attestation-only cell of its own (the startup snapshot's check). */
cap_code attest_cell(host *h, struct cell *c, json_t *report, cap_error *err);
cap_code attest_only_cell(host *h, json_t *report, cap_error *err);
/* The static checks of every capsule (root or bundle, manifest, policy,
 * digest, staging, workspace), in order; no code runs. */
cap_code host_admit_capsules(host *h, cap_error *err);
/* Static checks, attestation, one describe cell per capsule; publishes
 * all or nothing. */
cap_code host_activate(host *h, cap_error *err);
/* {"tools":[...], "promptSections":[...]} of an activated host. */
json_t *host_registry(const host *h);
/* A fresh cell for cap that has answered describe within startupTimeoutMs
 * (described_cell.c). On success the cell is running and *reply holds its
 * describe.result; *started false means no cell needs joining. */
struct cell;
cap_code host_described_cell(host *h, loaded_capsule *cap, struct cell *c, bool *started,
                             json_t **reply, cap_error *err);
/* The second half of it, for a started cell whose loader waits: "load",
 * then describe within startupTimeoutMs from now. */
cap_code cell_load_and_describe(struct cell *c, json_t **reply, cap_error *err);
/* The published descriptor of tool name, and (if cap) its capsule; NULL
 * when no activated capsule publishes it. */
const json_t *host_find_tool(const host *h, const char *name, loaded_capsule **cap);
/* One tool call in a fresh cell; *result is {"isError":..., ...}. */
cap_code host_call(host *h, const char *tool, const json_t *input, json_t **result,
                   cap_error *err);
/* The same call in a warm cell of cap: started ahead of the call, its
 * loader waiting for "load". Checks as host_call, then that every
 * workspace grant is still the file the cell's launcher verified. */
cap_code host_call_in_warm_cell(host *h, loaded_capsule *cap, struct cell *c, const char *tool,
                                const json_t *input, json_t **result, cap_error *err);
void host_close(host *h);

/* `capsule-host verify` (verify.c): the envelope or bundle at path against
 * the public key; with config, its subjects against the capsules the
 * config admits here, and (a world statement) the world of this machine,
 * attested again, against the signed one, field by field (WORLD_DRIFT
 * names them). */
cap_code host_verify_attestation(const char *path, const char *public_key, const char *config,
                                 json_t **report, cap_error *err);

#endif
