/* A capsule after static activation: manifest validated against policy,
 * artifact verified and staged, workspace grants resolved to inodes. */
#ifndef CAPSULE_H
#define CAPSULE_H

#include <jansson.h>
#include <stdbool.h>

#include "cap_error.h"
#include "manifest.h"
#include "staging.h"
#include "workspace.h"

/* Pointers only: declared, not included (C11 allows the repeat). */
typedef struct bundle_contents bundle_contents;
typedef struct capsule_config capsule_config;
typedef struct host_limits host_limits;

typedef struct loaded_capsule {
  const capsule_config *cfg;
  manifest m;
  staged_file guest;
  workspace_grants workspace;
  json_t *descriptor;       /* describe.result as admitted at activation */
  char manifest_sha256[65]; /* of the manifest bytes read ("" if none were) */
  char bundle_sha256[65];   /* of the bundle file as read at admission; "" for a root */
} loaded_capsule;

/* Everything that can be checked without running code, in order: root,
 * manifest, policy upper bound, artifact digest, staging, workspace. */
cap_code capsule_load(const capsule_config *cfg, const host_limits *lim, staging *stg, size_t index,
                      loaded_capsule *out, cap_error *err);
/* Reads and validates the manifest in cfg->root (and the policy when
 * police) and the artifact bytes it names, without staging anything.
 * manifest_text may be NULL. Used by activation and by pack. */
cap_code capsule_read_root(const capsule_config *cfg, const host_limits *lim, bool police,
                           loaded_capsule *out, char **manifest_text, size_t *mlen, char **artifact,
                           size_t *alen, cap_error *err);
/* INTEGRITY_MISMATCH unless sha256(artifact) is the pinned digest. */
cap_code capsule_check_digest(const manifest *m, const char *artifact, size_t alen, char *hex,
                              cap_error *err);
/* The one bundle admission, for activation and `inspect`: reads the
 * archive into b, parses its manifest into m (and, with policy, checks it
 * against the policy), requires the other entry to be the manifest's entry
 * and its bytes to match the pinned digest (hex gets the actual digest).
 * The caller frees b and m whatever the result. */
cap_code capsule_admit_bundle(const char *path, const capsule_config *policy, const host_limits *lim,
                              manifest *m, bundle_contents *b, char *hex, cap_error *err);
void capsule_free(loaded_capsule *c);

/* A capsule directory as `bundle` and `pin` read it (capsule.json and the
 * artifact it names, the manifest's digest not yet compared). */
typedef struct {
  loaded_capsule cap;
  char *manifest_text, *artifact;
  size_t manifest_len, artifact_len;
} capsule_dir;
cap_code capsule_dir_read(const char *dir, const host_limits *lim, capsule_dir *out, cap_error *err);
void capsule_dir_free(capsule_dir *d);

#endif
