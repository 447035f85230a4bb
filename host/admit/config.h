/* Deployment configuration: the seed's field names and defaults, strictly. */
#ifndef CONFIG_H
#define CONFIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "cap_error.h"

typedef struct {
  const char *path; /* workspace-read grant path (relative) */
} policy_grant;

typedef struct capsule_config {
  const char *root;           /* absolute capsule directory, or NULL with bundle */
  const char *bundle;         /* absolute .capsule.tar.gz path, instead of root */
  const char *manifest;       /* relative to root, default capsule.json */
  const char *workspace_root; /* absolute, or NULL */
  const char *capsule_id;
  json_t *tools;           /* array of strings */
  json_t *prompt_sections; /* array of strings */
  json_t *grants;          /* array of {kind, path} (validated) */
} capsule_config;

typedef struct host_limits {
  long long max_manifest_bytes, max_artifact_bytes, max_frame_bytes, max_stderr_bytes, max_description_bytes,
      max_prompt_bytes, max_contributions, max_json_nodes, max_json_depth, startup_timeout_ms,
      call_timeout_ms, shutdown_timeout_ms, process_grace_ms, max_concurrent_calls, max_queued_calls,
      max_old_space_size_mb, tmpfs_bytes, queue_timeout_ms, max_cell_memory_mb, max_cell_cpu_seconds,
      max_cell_file_bytes, max_cell_open_files, warm_cells_per_capsule, warm_cell_max_idle_ms,
      warm_cell_preload;
} host_limits;

typedef struct {
  json_t *json;          /* owns all strings */
  char path[4096];       /* the file it came from; "" for defaults */
  char sha256[65];       /* of its RFC 8785 canonical form: what summaries name it by; "" for defaults */
  char bytes_sha256[65]; /* of its bytes: what summaries named it by before (still verified) */
  const char *bubblewrap_command;
  host_limits limits;
  capsule_config *capsules;
  size_t capsule_count;
} host_config;

/* {"defaults": {field: value, ...}, "bounds": {field: [min, max], ...}}:
 * the one table of config fields, printed by `capsule-host defaults` and
 * checked against README, cordis.patch.yml and the tests. */
json_t *config_table_json(void);
/* Defaults only (no capsules): what `attest` uses without --config. */
void config_defaults(host_config *cfg);
cap_code config_load(const char *path, host_config *cfg, cap_error *err);
/* Parses config text; exposed for the fuzz harness. */
cap_code config_parse(const char *text, size_t len, host_config *cfg, cap_error *err);
void config_free(host_config *cfg);

#endif
