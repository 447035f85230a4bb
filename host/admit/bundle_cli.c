#include "bundle_cli.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "capsule.h"
#include "config.h"
#include "digest.h"
#include "safe_open.h"

static json_t *summary(const manifest *m, const char *actual) {
  return json_pack("{s:s,s:s,s:{s:s,s:s,s:b},s:O,s:O}", "id", m->id, "entry", m->entry, "integrity", "pinned",
                   m->sha256, "actual", actual, "matches", strcmp(m->sha256, actual) == 0, "contributes",
                   json_object_get(m->json, "contributes"), "requests", m->requests);
}

cap_code bundle_cli_pack(const char *dir, const char *out_path, const host_limits *lim, json_t **report,
                         cap_error *err) {
  char real[PATH_MAX];
  if (!realpath(dir, real))
    return cap_fail(err, CAP_E_CAPSULE_ROOT_INVALID, "capsule directory %s does not exist", dir);
  capsule_dir d;
  char hex[SHA256_HEX_LEN + 1];
  cap_code rc = capsule_dir_read(real, lim, &d, err);
  const manifest *m = &d.cap.m;
  if (!rc) rc = capsule_check_digest(m, d.artifact, d.artifact_len, hex, err);
  if (!rc && strchr(m->entry, '/'))
    rc = cap_fail(err, CAP_E_BUNDLE_ENTRY_UNSAFE, "bundle entries must be top-level files, not %s", m->entry);
  if (!rc)
    rc = bundle_write(out_path, d.manifest_text, d.manifest_len, m->entry, d.artifact, d.artifact_len, err);
  if (!rc) {
    *report = summary(m, hex);
    json_object_set_new(*report, "bundle", json_string(out_path));
  }
  capsule_dir_free(&d);
  return rc;
}

cap_code bundle_cli_inspect(const char *path, const host_limits *lim, json_t **report, cap_error *err) {
  bundle_contents b;
  manifest m;
  memset(&m, 0, sizeof m);
  char hex[SHA256_HEX_LEN + 1] = "";
  memset(&b, 0, sizeof b);
  /* As a configured bundle: the path names exactly one file, as given. */
  if (!so_is_plain_absolute(path))
    return cap_fail(err, CAP_E_BUNDLE_OPEN, "bundle path %s is not a normalised absolute path", path);
  cap_code rc = capsule_admit_bundle(path, NULL, lim, &m, &b, hex, err);
  if (!rc) {
    *report = summary(&m, hex);
    json_object_set_new(*report, "bundle", json_string(path));
    json_object_set_new(*report, "manifest", json_deep_copy(m.json));
  }
  manifest_free(&m);
  bundle_contents_free(&b);
  return rc;
}
