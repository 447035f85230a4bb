#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "canonical_json.h"
#include "digest.h"
#include "launch_contract.h"
#include "requests.h"
#include "safe_open.h"
#include "strict_json.h"

#define CONFIG_MAX_BYTES (4u << 20)

typedef struct {
  const char *name;
  size_t offset;
  long long def, min, max;
} limit_field;

#define LIMIT(name, field, def, min, max) \
  { name, offsetof(host_limits, field), def, min, max }

/* The seed's v0.1 defaults; bounds keep every limit meaningful. */
static const limit_field limit_fields[] = {
    LIMIT("maxManifestBytes", max_manifest_bytes, 262144, 64, 16 << 20),
    LIMIT("maxArtifactBytes", max_artifact_bytes, 16777216, 1, 1LL << 30),
    LIMIT("maxFrameBytes", max_frame_bytes, 1048576, 256, 64 << 20),
    LIMIT("maxStderrBytes", max_stderr_bytes, 65536, 0, 64 << 20),
    LIMIT("maxDescriptionBytes", max_description_bytes, 4096, 1, 1 << 20),
    LIMIT("maxPromptBytes", max_prompt_bytes, 65536, 1, 16 << 20),
    LIMIT("maxContributions", max_contributions, 64, 1, 4096),
    LIMIT("maxJsonNodes", max_json_nodes, 10000, 16, 10000000),
    LIMIT("maxJsonDepth", max_json_depth, 32, 4, 1000),
    LIMIT("startupTimeoutMs", startup_timeout_ms, 5000, 1, 600000),
    LIMIT("callTimeoutMs", call_timeout_ms, 30000, 1, 86400000),
    LIMIT("shutdownTimeoutMs", shutdown_timeout_ms, 500, 1, 600000),
    LIMIT("processGraceMs", process_grace_ms, 500, 1, 600000),
    LIMIT("maxConcurrentCalls", max_concurrent_calls, 4, 1, 1024),
    LIMIT("maxQueuedCalls", max_queued_calls, 32, 0, 100000),
    LIMIT("maxOldSpaceSizeMb", max_old_space_size_mb, 128, 16, 1 << 20),
    LIMIT("tmpfsBytes", tmpfs_bytes, 16777216, 4096, 1LL << 40),
    /* Beyond the seed: how long a serve call may wait for a cell, and the
     * per-process ceilings of every cell (launcher setrlimit). */
    LIMIT("queueTimeoutMs", queue_timeout_ms, 10000, 1, 86400000),
    LIMIT("maxCellMemoryMb", max_cell_memory_mb, 1024, LAUNCH_MIN_MEMORY_BYTES >> 20, 1 << 20),
    LIMIT("maxCellCpuSeconds", max_cell_cpu_seconds, 60, 1, 86400),
    LIMIT("maxCellFileBytes", max_cell_file_bytes, 16777216, 1, 1LL << 40),
    LIMIT("maxCellOpenFiles", max_cell_open_files, 256, LAUNCH_MIN_OPEN_FILES, 1 << 20),
    /* serve: cells started ahead of a call (launcher, bwrap, Node, loader;
     * no guest code) per capsule, and how long one may wait unused. */
    LIMIT("warmCellsPerCapsule", warm_cells_per_capsule, 1, 0, 16),
    LIMIT("warmCellMaxIdleMs", warm_cell_max_idle_ms, 60000, 100, 86400000),
    /* 1: a warm cell loads and describes its guest at warm-up (its top-level
     * code runs before any call, as in every describe cell); 0: only the
     * loader waits, and the guest is loaded once its call arrives. */
    LIMIT("warmCellPreload", warm_cell_preload, 1, 0, 1),
};
/* Node itself maps about 60 MiB of private data before the heap grows. */
#define CELL_MEMORY_HEADROOM_MB 64
#define LIMIT_COUNT (sizeof limit_fields / sizeof limit_fields[0])

json_t *config_table_json(void) {
  json_t *defaults = json_pack("{s:s}", "bubblewrapCommand", "bwrap"), *bounds = json_object();
  for (size_t i = 0; i < LIMIT_COUNT; i++) {
    const limit_field *f = &limit_fields[i];
    json_object_set_new(defaults, f->name, json_integer(f->def));
    json_object_set_new(bounds, f->name, json_pack("[I,I]", (json_int_t)f->min, (json_int_t)f->max));
  }
  return json_pack("{s:o,s:o}", "defaults", defaults, "bounds", bounds);
}

void config_defaults(host_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->bubblewrap_command = "bwrap";
  for (size_t i = 0; i < LIMIT_COUNT; i++)
    *(long long *)((char *)&cfg->limits + limit_fields[i].offset) = limit_fields[i].def;
}

static bool string_array(const json_t *obj, const char *key, json_t **out, const char *what, cap_error *err) {
  if (!sj_array(obj, key, out, CAP_E_CONFIG_INVALID, what, err)) return false;
  size_t i;
  json_t *v;
  json_array_foreach(*out, i, v) if (!json_is_string(v)) {
    cap_fail(err, CAP_E_CONFIG_INVALID, "%s.%s[%zu] must be a string", what, key, i);
    return false;
  }
  return true;
}

static cap_code parse_policy(const json_t *p, capsule_config *c, cap_error *err) {
  static const char *const keys[] = {"capsuleId", "tools", "promptSections", "grants", NULL};
  if (!sj_keys(p, keys, keys, CAP_E_CONFIG_INVALID, "policy", err) ||
      !sj_string(p, "capsuleId", &c->capsule_id, CAP_E_CONFIG_INVALID, "policy", err) ||
      !string_array(p, "tools", &c->tools, "policy", err) ||
      !string_array(p, "promptSections", &c->prompt_sections, "policy", err) ||
      !sj_array(p, "grants", &c->grants, CAP_E_CONFIG_INVALID, "policy", err))
    return err->code;
  /* Grants are syntax-checked even when nothing requests them. */
  return requests_check_list(c->grants, "policy.grants", CAP_E_CONFIG_INVALID, err);
}

/* A relative path in a config is never read (what it meant would depend on
 * where the host was started); the refusal shows what it probably meant:
 * the path beside the config file. */
static const char *meant(const char *value, const char *config_path, char *out, size_t size) {
  const char *slash = strrchr(config_path, '/');
  if (!value || value[0] == '/' || !slash) return "";
  while (value[0] == '.' && value[1] == '/') value += 2;
  snprintf(out, size, " (relative paths are not read here: did you mean %.*s/%s?)",
           (int)(slash - config_path), config_path, value);
  return out;
}

static cap_code parse_capsule(const json_t *o, size_t idx, capsule_config *c, const char *config_path,
                              cap_error *err) {
  char hint[4400];
  static const char *const keys[] = {"root", "manifest", "bundle", "workspaceRoot", "policy", NULL};
  static const char *const required[] = {"policy", NULL};
  char what[48];
  snprintf(what, sizeof what, "capsules[%zu]", idx);
  c->manifest = "capsule.json";
  if (!sj_keys(o, keys, required, CAP_E_CONFIG_INVALID, what, err) ||
      !sj_opt_string(o, "root", &c->root, CAP_E_CONFIG_INVALID, what, err) ||
      !sj_opt_string(o, "bundle", &c->bundle, CAP_E_CONFIG_INVALID, what, err) ||
      !sj_opt_string(o, "manifest", &c->manifest, CAP_E_CONFIG_INVALID, what, err) ||
      !sj_opt_string(o, "workspaceRoot", &c->workspace_root, CAP_E_CONFIG_INVALID, what, err))
    return err->code;
  /* Exactly one source: a root directory (with manifest) or a bundle. */
  if (!c->root == !c->bundle || (c->bundle && json_object_get(o, "manifest")))
    return cap_fail(err, CAP_E_CONFIG_INVALID,
                    "%s needs either root (and optional manifest) or bundle, not both", what);
  if (c->bundle && !so_is_plain_absolute(c->bundle))
    return cap_fail(err, CAP_E_BUNDLE_OPEN, "%s.bundle must be a normalised absolute path%s", what,
                    meant(c->bundle, config_path, hint, sizeof hint));
  if (c->root && !so_is_plain_absolute(c->root))
    return cap_fail(err, CAP_E_CAPSULE_ROOT_INVALID, "%s.root must be a normalised absolute path%s", what,
                    meant(c->root, config_path, hint, sizeof hint));
  if (!so_is_plain_relative(c->manifest))
    return cap_fail(err, CAP_E_MANIFEST_OPEN, "%s.manifest must be a plain relative path inside root", what);
  /* "/" is a legal (if unwise) root; the staging-overlap check refuses it. */
  if (c->workspace_root && strcmp(c->workspace_root, "/") != 0 && !so_is_plain_absolute(c->workspace_root))
    return cap_fail(err, CAP_E_WORKSPACE_ROOT_INVALID,
                    "%s.workspaceRoot must be a normalised absolute path%s", what,
                    meant(c->workspace_root, config_path, hint, sizeof hint));
  return parse_policy(json_object_get(o, "policy"), c, err);
}

/* The config from text; path is the file it came from ("" for none), which
 * a refusal of a relative path uses to say what it probably meant. */
static cap_code parse_config(const char *text, size_t len, const char *path, host_config *cfg,
                             cap_error *err) {
  config_defaults(cfg);
  snprintf(cfg->path, sizeof cfg->path, "%s", path);
  sj_limits lim = {.max_depth = 16, .max_nodes = 200000};
  json_t *root = sj_parse_as(text, len, &lim, CAP_E_CONFIG_INVALID, "config", err);
  if (!root) return err->code;
  cfg->json = root;
  if (!json_is_object(root)) return cap_fail(err, CAP_E_CONFIG_INVALID, "config must be a JSON object");
  const char *key;
  json_t *v;
  json_object_foreach(root, key, v) {
    if (strcmp(key, "capsules") == 0 || strcmp(key, "bubblewrapCommand") == 0) continue;
    const limit_field *f = NULL;
    for (size_t i = 0; i < LIMIT_COUNT; i++)
      if (strcmp(limit_fields[i].name, key) == 0) f = &limit_fields[i];
    if (!f) return cap_fail(err, CAP_E_CONFIG_INVALID, "config has unknown field \"%s\"", key);
    long long *slot = (long long *)((char *)&cfg->limits + f->offset);
    if (!sj_opt_uint(root, key, f->min, f->max, slot, CAP_E_CONFIG_INVALID, "config", err)) return err->code;
  }
  if (cfg->limits.max_cell_memory_mb < cfg->limits.max_old_space_size_mb + CELL_MEMORY_HEADROOM_MB)
    return cap_fail(err, CAP_E_CONFIG_INVALID,
                    "config.maxCellMemoryMb (%lld) must be at least maxOldSpaceSizeMb + %d (%lld)",
                    cfg->limits.max_cell_memory_mb, CELL_MEMORY_HEADROOM_MB,
                    cfg->limits.max_old_space_size_mb + CELL_MEMORY_HEADROOM_MB);
  if (!sj_opt_string(root, "bubblewrapCommand", &cfg->bubblewrap_command, CAP_E_CONFIG_INVALID, "config",
                     err))
    return err->code;
  if (cfg->bubblewrap_command[0] == '\0' || strlen(cfg->bubblewrap_command) > 4096)
    return cap_fail(err, CAP_E_CONFIG_INVALID,
                    "config.bubblewrapCommand must be a non-empty command name or path");
  json_t *caps = json_object_get(root, "capsules");
  if (!caps) return CAP_OK;
  if (!json_is_array(caps)) return cap_fail(err, CAP_E_CONFIG_INVALID, "config.capsules must be an array");
  cfg->capsule_count = json_array_size(caps);
  cfg->capsules = calloc(cfg->capsule_count ? cfg->capsule_count : 1, sizeof *cfg->capsules);
  if (!cfg->capsules) return cap_fail(err, CAP_E_INTERNAL, "out of memory");
  size_t i;
  json_array_foreach(
      caps, i, v) if (parse_capsule(v, i, &cfg->capsules[i], cfg->path, err) != CAP_OK) return err->code;
  return CAP_OK;
}

cap_code config_parse(const char *text, size_t len, host_config *cfg, cap_error *err) {
  return parse_config(text, len, "", cfg, err);
}

cap_code config_load(const char *path, host_config *cfg, cap_error *err) {
  config_defaults(cfg);
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return cap_fail(err, CAP_E_CONFIG_READ, "cannot open config %s: %s", path, strerror(errno));
  char *text = NULL;
  size_t len = 0;
  so_read_result rc = so_read_bounded(fd, CONFIG_MAX_BYTES, &text, &len);
  close(fd);
  if (rc != SO_READ_OK)
    return cap_fail(err, CAP_E_CONFIG_READ, "cannot read config %s: %s", path,
                    rc == SO_READ_TOO_LARGE ? "larger than 4 MiB" : strerror(errno));
  /* What an attestation names the policy by: its path and these bytes. */
  char *abs = realpath(path, NULL);
  cap_code rc2 = parse_config(text, len, abs ? abs : path, cfg, err);
  free(abs);
  digest_sha256_hex(text, len, cfg->bytes_sha256);
  free(text);
  /* A policy's digest survives reformatting: that of its canonical form. */
  char *canonical = rc2 ? NULL : canonical_json(cfg->json);
  if (canonical)
    digest_sha256_hex(canonical, strlen(canonical), cfg->sha256);
  else if (!rc2)
    rc2 = cap_fail(err, CAP_E_CONFIG_INVALID, "config %s has no canonical form (a fraction?)", path);
  free(canonical);
  return rc2;
}

void config_free(host_config *cfg) {
  json_decref(cfg->json);
  free(cfg->capsules);
  cfg->json = NULL;
  cfg->capsules = NULL;
}
