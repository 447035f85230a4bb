/* Which workspace files a cell sees: each granted workspace-read resolved
 * once, at activation, beneath workspaceRoot (no symbolic link, no escape)
 * to one regular file with exactly one name, outside the host's private
 * staging, and pinned by inode; and, when a warm cell takes its call, the
 * check that every grant still resolves to that same inode. */
#ifndef WORKSPACE_H
#define WORKSPACE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "cap_error.h"

#define WORKSPACE_MAX_GRANTS 128

typedef struct {
  const char *path; /* relative, as requested (owned by the manifest) */
  unsigned long long dev, ino;
  /* The granted inode, held open (O_PATH) from activation to
   * workspace_release: while it is held the filesystem cannot hand its
   * number to another file, so (dev, ino) names this file and no later one
   * (ext4 reuses a freed number at once). */
  int pin_fd;
} workspace_file;

/* A resolved capsule's grants, and what they may not be. */
typedef struct {
  workspace_file files[WORKSPACE_MAX_GRANTS];
  size_t count;
} workspace_grants;

/* inner is outer or lies beneath it (lexically, on plain absolute paths). */
bool workspace_path_within(const char *inner, const char *outer);

/* Resolves requests (manifest workspace-read objects, each with "path")
 * beneath root into g; the staged guest (guest_dev, guest_ino) and the
 * staging directory may not be reached. Codes: WORKSPACE_ROOT_INVALID (no
 * root while files are requested, or not a directory),
 * WORKSPACE_STAGING_OVERLAP, WORKSPACE_TARGET_INVALID, WORKSPACE_HARDLINK,
 * MANIFEST_INVALID (more than WORKSPACE_MAX_GRANTS). Files resolved before
 * a failure stay in g for workspace_release. */
cap_code workspace_resolve(const char *root, const json_t *requests, const char *staging_dir,
                           unsigned long long guest_dev, unsigned long long guest_ino, workspace_grants *g,
                           cap_error *err);
/* Every grant still resolves (beneath root, no symlinks) to the regular
 * file admitted at activation (same dev/inode); otherwise
 * LAUNCH_SOURCE_MISMATCH, as the launcher says for a cold cell. */
cap_code workspace_unchanged(const char *root, const workspace_grants *g, cap_error *err);
/* Closes the pins. */
void workspace_release(workspace_grants *g);

#endif
