#include "workspace.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safe_open.h"

bool workspace_path_within(const char *inner, const char *outer) {
  size_t n = strlen(outer);
  if (strcmp(outer, "/") == 0) return true;
  return strncmp(inner, outer, n) == 0 && (inner[n] == '\0' || inner[n] == '/');
}

/* One request: its inode, checked and pinned into *wf (pin_fd >= 0). */
static cap_code resolve_one(int root, const char *path, unsigned long long guest_dev,
                            unsigned long long guest_ino, workspace_file *wf, cap_error *err) {
  int fd = so_open(root, path, O_PATH);
  struct stat st;
  if (fd < 0)
    return cap_fail(err, CAP_E_WORKSPACE_TARGET_INVALID, "workspace file %s %s", path,
                    so_open_errno_text(errno));
  cap_code rc = CAP_OK;
  if (fstat(fd, &st) != 0)
    rc = cap_fail(err, CAP_E_WORKSPACE_TARGET_INVALID, "workspace file %s cannot be inspected: %s", path,
                  strerror(errno));
  else if (!S_ISREG(st.st_mode))
    rc = cap_fail(err, CAP_E_WORKSPACE_TARGET_INVALID, "workspace file %s is %s", path,
                  so_file_type_text(st.st_mode));
  /* Another name for the inode could be anywhere: refuse aliases. */
  else if (st.st_nlink != 1)
    rc = cap_fail(err, CAP_E_WORKSPACE_HARDLINK,
                  "workspace file %s has %lu hard links; exactly one is required", path,
                  (unsigned long)st.st_nlink);
  else if ((unsigned long long)st.st_dev == guest_dev && (unsigned long long)st.st_ino == guest_ino)
    rc = cap_fail(err, CAP_E_WORKSPACE_STAGING_OVERLAP, "workspace file %s is a staged file", path);
  if (rc) {
    close(fd);
    return rc;
  }
  *wf = (workspace_file){path, (unsigned long long)st.st_dev, (unsigned long long)st.st_ino, fd};
  return CAP_OK;
}

cap_code workspace_resolve(const char *workspace_root, const json_t *requests, const char *staging_dir,
                           unsigned long long guest_dev, unsigned long long guest_ino, workspace_grants *g,
                           cap_error *err) {
  if (json_array_size(requests) == 0) return CAP_OK;
  if (!workspace_root)
    return cap_fail(err, CAP_E_WORKSPACE_ROOT_INVALID,
                    "capsule requests workspace files but has no workspaceRoot");
  if (workspace_path_within(staging_dir, workspace_root) ||
      workspace_path_within(workspace_root, staging_dir))
    return cap_fail(err, CAP_E_WORKSPACE_STAGING_OVERLAP,
                    "workspaceRoot %s overlaps private staging %s (set TMPDIR outside it)", workspace_root,
                    staging_dir);
  int root = so_open(AT_FDCWD, workspace_root, O_PATH | O_DIRECTORY);
  if (root < 0)
    return cap_fail(err, CAP_E_WORKSPACE_ROOT_INVALID, "workspaceRoot %s %s", workspace_root,
                    errno == ENOTDIR ? "is not a directory" : so_open_errno_text(errno));
  size_t i;
  json_t *r;
  cap_code rc = CAP_OK;
  json_array_foreach(requests, i, r) {
    if (g->count == WORKSPACE_MAX_GRANTS) {
      rc = cap_fail(err, CAP_E_MANIFEST_INVALID, "too many workspace requests");
      break;
    }
    const char *path = json_string_value(json_object_get(r, "path"));
    if ((rc = resolve_one(root, path, guest_dev, guest_ino, &g->files[g->count], err))) break;
    g->count++;
  }
  close(root);
  return rc;
}

cap_code workspace_unchanged(const char *workspace_root, const workspace_grants *g, cap_error *err) {
  if (g->count == 0) return CAP_OK;
  int root = so_open(AT_FDCWD, workspace_root, O_PATH | O_DIRECTORY);
  if (root < 0)
    return cap_fail(err, CAP_E_LAUNCH_SOURCE_MISMATCH, "workspace root %s: %s", workspace_root,
                    strerror(errno));
  cap_code rc = CAP_OK;
  for (size_t i = 0; !rc && i < g->count; i++) {
    const workspace_file *f = &g->files[i];
    struct stat st;
    int fd = so_open_regular(root, f->path, &st);
    if (fd >= 0) close(fd);
    if (fd < 0 || (unsigned long long)st.st_dev != f->dev || (unsigned long long)st.st_ino != f->ino)
      rc = cap_fail(err, CAP_E_LAUNCH_SOURCE_MISMATCH,
                    "workspace file %s is not the file the warm cell's launcher verified "
                    "(replaced, removed or not regular)",
                    f->path);
  }
  close(root);
  return rc;
}

void workspace_release(workspace_grants *g) {
  for (size_t i = 0; i < g->count; i++)
    if (g->files[i].pin_fd >= 0) close(g->files[i].pin_fd);
  g->count = 0;
}
