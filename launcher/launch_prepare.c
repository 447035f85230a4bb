#include "launch_prepare.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "digest.h"
#include "safe_open.h"
#include "seccomp_policy.h"

#define MAX_GUEST_BYTES (1u << 30)

/* Opens path without symlinks as O_PATH and checks it is the regular file
 * the host staged (same device and inode). */
static int open_verified(int dirfd, const char *path, unsigned long long dev, unsigned long long ino,
                         const char *what, cap_error *err) {
  int fd = so_open(dirfd, path, O_PATH);
  if (fd < 0) {
    cap_fail(err, CAP_E_LAUNCH_SOURCE_MISMATCH, "%s %s: cannot open without symlinks: %s", what, path,
             strerror(errno));
    return -1;
  }
  struct stat st;
  /* Type is checked on the opened descriptor, never before opening. */
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    cap_fail(err, CAP_E_LAUNCH_SOURCE_MISMATCH, "%s %s is not a regular file", what, path);
    close(fd);
    return -1;
  }
  if ((unsigned long long)st.st_dev != dev || (unsigned long long)st.st_ino != ino) {
    cap_fail(err, CAP_E_LAUNCH_SOURCE_MISMATCH, "%s %s is not the file the host verified (dev/inode changed)",
             what, path);
    close(fd);
    return -1;
  }
  return fd;
}

/* Guest, loader and snapshot: the bytes must be the ones the host hashed. */
static bool digest_matches(int path_fd, const char *expected, const char *what, cap_error *err) {
  char proc[64];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", path_fd);
  /* Reopening the O_PATH descriptor reaches the same inode, not a path. */
  int fd = open(proc, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    cap_fail(err, CAP_E_LAUNCH_SOURCE_MISMATCH, "cannot reopen the staged %s", what);
    return false;
  }
  /* Streamed: a 4 MiB snapshot is hashed without a copy of it in memory. */
  char hex[SHA256_HEX_LEN + 1];
  bool ok = digest_sha256_fd_hex(fd, MAX_GUEST_BYTES, hex) && strcmp(hex, expected) == 0;
  close(fd);
  if (!ok) cap_fail(err, CAP_E_LAUNCH_SOURCE_MISMATCH, "staged %s digest changed", what);
  return ok;
}

/* Builds the cell filter and checks it is the one the host attested. */
static int seccomp_fd_matching(const char *expected, cap_error *err) {
  size_t len = 0;
  int fd = seccomp_policy_memfd(&len, err);
  if (fd < 0) return -1;
  char *bpf = NULL;
  size_t got = 0;
  char hex[SHA256_HEX_LEN + 1];
  bool ok = so_read_bounded(fd, len, &bpf, &got) == SO_READ_OK && got == len &&
            digest_sha256_hex(bpf, got, hex) && strcmp(hex, expected) == 0 && lseek(fd, 0, SEEK_SET) == 0;
  free(bpf);
  if (!ok) {
    close(fd);
    cap_fail(err, CAP_E_LAUNCH_DOC_INVALID,
             "seccomp filter differs from the one the host attested (seccompSha256)");
    return -1;
  }
  return fd;
}

static int open_mount_source(const ld_mount *m, cap_error *err) {
  if (m->label == LD_WORKSPACE_READ) {
    int root = so_open(AT_FDCWD, m->root, O_PATH | O_DIRECTORY);
    if (root < 0) {
      cap_fail(err, CAP_E_LAUNCH_SOURCE_MISMATCH, "workspace root %s: %s", m->root, strerror(errno));
      return -1;
    }
    /* RESOLVE_BENEATH + NO_SYMLINKS: the file must be reached inside root. */
    int fd = open_verified(root, m->path, m->dev, m->ino, "workspace file", err);
    close(root);
    return fd;
  }
  int fd = open_verified(AT_FDCWD, m->source, m->dev, m->ino, launch_label_name(m->label), err);
  if (fd >= 0 && m->sha256 && !digest_matches(fd, m->sha256, launch_label_name(m->label), err)) {
    close(fd);
    return -1;
  }
  return fd;
}

cap_code launch_prepare(int doc_fd, size_t max_doc_bytes, launch_plan *plan, cap_error *err) {
  memset(plan, 0, sizeof *plan);
  plan->bwrap_fd = plan->seccomp_fd = -1;
  char *text = NULL;
  size_t len = 0;
  so_read_result rc = so_read_bounded(doc_fd, max_doc_bytes, &text, &len);
  if (rc != SO_READ_OK)
    return cap_fail(err, CAP_E_LAUNCH_DOC_INVALID, "cannot read launch document (%s)",
                    rc == SO_READ_TOO_LARGE ? "too large" : strerror(errno));
  cap_code parsed = launch_doc_parse(text, len, &plan->doc, err);
  free(text);
  if (parsed != CAP_OK) return parsed;
  plan->doc_parsed = true;

  plan->bwrap_fd =
      open_verified(AT_FDCWD, plan->doc.bwrap_path, plan->doc.bwrap_dev, plan->doc.bwrap_ino, "bwrap", err);
  if (plan->bwrap_fd < 0) return err->code;
  for (size_t i = 0; i < plan->doc.mount_count; i++) {
    int fd = open_mount_source(&plan->doc.mounts[i], err);
    if (fd < 0) return err->code;
    plan->mount_fds[plan->mount_fd_count++] = fd;
  }
  plan->seccomp_fd = seccomp_fd_matching(plan->doc.seccomp_sha256, err);
  if (plan->seccomp_fd < 0) return err->code;
  plan->highest_fd = plan->seccomp_fd;
  for (size_t i = 0; i < plan->mount_fd_count; i++)
    if (plan->mount_fds[i] > plan->highest_fd) plan->highest_fd = plan->mount_fds[i];
  if (bwrap_argv_build(&plan->doc, plan->mount_fds, plan->seccomp_fd, &plan->argv, err) != CAP_OK)
    return err->code;
  plan->argv_built = true;
  return CAP_OK;
}

void launch_plan_close(launch_plan *plan) {
  if (plan->argv_built) argv_list_free(&plan->argv);
  if (plan->doc_parsed) launch_doc_free(&plan->doc);
  for (size_t i = 0; i < plan->mount_fd_count; i++) close(plan->mount_fds[i]);
  if (plan->bwrap_fd >= 0) close(plan->bwrap_fd);
  if (plan->seccomp_fd >= 0) close(plan->seccomp_fd);
  plan->argv_built = plan->doc_parsed = false;
  plan->mount_fd_count = 0;
  plan->bwrap_fd = plan->seccomp_fd = -1;
}
