/* capsule-launcher: verifies every mount source by descriptor and execs
 * bwrap with descriptor mounts only, an empty environment and no inherited
 * descriptors but the protocol pipes. See common/launch_contract.h for the contract. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bwrap_argv.h"
#include "cap_error.h"
#include "ceilings.h"
#include "digest.h"
#include "launch_doc.h"
#include "launch_contract.h"
#include "safe_open.h"
#include "seccomp_policy.h"

#define LAUNCHER_EXIT_FAILURE 127
#define MAX_GUEST_BYTES (1u << 30)

static void report_and_exit(const cap_error *err) {
  json_t *o = json_pack("{s:s,s:s}", "code", cap_code_name(err->code),
                        "message", err->message);
  char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
  if (text) {
    so_write_all(LAUNCHER_STATUS_FD, text, strlen(text));
    free(text);
  }
  json_decref(o);
  _exit(LAUNCHER_EXIT_FAILURE);
}

/* Opens path without symlinks as O_PATH and checks it is the regular file
 * the host staged (same device and inode). */
static int open_verified(int dirfd, const char *path, unsigned long long dev,
                         unsigned long long ino, const char *what,
                         cap_error *err) {
  int fd = so_open(dirfd, path, O_PATH);
  if (fd < 0) {
    cap_fail(err, CAP_E_LAUNCH_SOURCE_MISMATCH, "%s %s: cannot open without symlinks: %s",
             what, path, strerror(errno));
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
    cap_fail(err, CAP_E_LAUNCH_SOURCE_MISMATCH,
             "%s %s is not the file the host verified (dev/inode changed)", what, path);
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
  char *buf = NULL;
  size_t len = 0;
  so_read_result rc = so_read_bounded(fd, MAX_GUEST_BYTES, &buf, &len);
  close(fd);
  char hex[SHA256_HEX_LEN + 1];
  bool ok = rc == SO_READ_OK && digest_sha256_hex(buf, len, hex) && strcmp(hex, expected) == 0;
  free(buf);
  if (!ok) cap_fail(err, CAP_E_LAUNCH_SOURCE_MISMATCH, "staged %s digest changed", what);
  return ok;
}

static void keep_across_exec(int fd) { fcntl(fd, F_SETFD, 0); }

/* Builds the cell filter and checks it is the one the host attested. */
static int seccomp_fd_matching(const char *expected, cap_error *err) {
  size_t len = 0;
  int fd = seccomp_policy_memfd(&len, err);
  if (fd < 0) return -1;
  char *bpf = NULL;
  size_t got = 0;
  char hex[SHA256_HEX_LEN + 1];
  bool ok = so_read_bounded(fd, len, &bpf, &got) == SO_READ_OK && got == len &&
            digest_sha256_hex(bpf, got, hex) && strcmp(hex, expected) == 0 &&
            lseek(fd, 0, SEEK_SET) == 0;
  free(bpf);
  if (!ok) {
    close(fd);
    cap_fail(err, CAP_E_LAUNCH_DOC_INVALID,
             "seccomp filter differs from the one the host attested (seccompSha256)");
    return -1;
  }
  return fd;
}

int main(void) {
  cap_error err = {0};
  /* Whatever the caller left open beyond the contract must not reach bwrap,
   * which passes every inherited descriptor on to the cell. */
  so_close_from(LAUNCHER_FIRST_FREE_FD);
  /* Status pipe closes itself on a successful exec. */
  if (fcntl(LAUNCHER_STATUS_FD, F_SETFD, FD_CLOEXEC) != 0) _exit(LAUNCHER_EXIT_FAILURE);
  char *text = NULL;
  size_t len = 0;
  so_read_result rc = so_read_bounded(LAUNCHER_DOC_FD, LAUNCH_DOC_MAX_BYTES, &text, &len);
  close(LAUNCHER_DOC_FD);
  if (rc != SO_READ_OK) {
    cap_fail(&err, CAP_E_LAUNCH_DOC_INVALID, "cannot read launch document (%s)",
             rc == SO_READ_TOO_LARGE ? "too large" : strerror(errno));
    report_and_exit(&err);
  }
  launch_doc doc;
  if (launch_doc_parse(text, len, &doc, &err) != CAP_OK) report_and_exit(&err);
  free(text);

  int bwrap_fd = open_verified(AT_FDCWD, doc.bwrap_path, doc.bwrap_dev, doc.bwrap_ino,
                               "bwrap", &err);
  if (bwrap_fd < 0) report_and_exit(&err);

  int mount_fds[LAUNCH_DOC_MAX_MOUNTS];
  for (size_t i = 0; i < doc.mount_count; i++) {
    ld_mount *m = &doc.mounts[i];
    int fd;
    if (m->label == LD_WORKSPACE_READ) {
      int root = so_open(AT_FDCWD, m->root, O_PATH | O_DIRECTORY);
      if (root < 0) {
        cap_fail(&err, CAP_E_LAUNCH_SOURCE_MISMATCH, "workspace root %s: %s", m->root,
                 strerror(errno));
        report_and_exit(&err);
      }
      /* RESOLVE_BENEATH + NO_SYMLINKS: the file must be reached inside root. */
      fd = open_verified(root, m->path, m->dev, m->ino, "workspace file", &err);
      close(root);
    } else {
      fd = open_verified(AT_FDCWD, m->source, m->dev, m->ino, launch_label_name(m->label), &err);
      if (fd >= 0 && m->sha256 && !digest_matches(fd, m->sha256, launch_label_name(m->label), &err))
        fd = -1;
    }
    if (fd < 0) report_and_exit(&err);
    mount_fds[i] = fd;
  }

  int seccomp_fd = seccomp_fd_matching(doc.seccomp_sha256, &err);
  if (seccomp_fd < 0) report_and_exit(&err);
  int highest_fd = seccomp_fd;
  for (size_t i = 0; i < doc.mount_count; i++)
    if (mount_fds[i] > highest_fd) highest_fd = mount_fds[i];
  if (ceilings_apply(&doc.ceilings, highest_fd, &err) != CAP_OK) report_and_exit(&err);
  argv_list argv;
  if (bwrap_argv_build(&doc, mount_fds, seccomp_fd, &argv, &err) != CAP_OK) report_and_exit(&err);
  keep_across_exec(seccomp_fd);
  for (size_t i = 0; i < doc.mount_count; i++) keep_across_exec(mount_fds[i]);
  launch_doc_free(&doc);

  /* bwrap's own PID 1 keeps bwrap's environment: give it none. */
  char *const empty_env[] = {NULL};
  syscall(SYS_execveat, bwrap_fd, "", argv.items, empty_env, AT_EMPTY_PATH);
  cap_fail(&err, CAP_E_LAUNCH_FAILED, "cannot exec bwrap: %s%s", strerror(errno),
           errno == ENOENT ? " (bubblewrapCommand must be an ELF executable, not a script)" : "");
  report_and_exit(&err);
}
