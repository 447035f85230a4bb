#include "seccomp_policy.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "digest.h"
#include "safe_open.h"

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

/* Denied outright with EPERM: kernel attack surface no guest needs. */
static const char *const eperm_syscalls[] = {
    "io_uring_setup", "io_uring_enter", "io_uring_register", /* io_uring */
    "keyctl", "add_key", "request_key",                      /* keyrings are not namespaced */
    "ptrace", "process_vm_readv", "process_vm_writev", "perf_event_open", "bpf", "setns",
    /* inotify watches and instances are charged to the host user's limits
     * (no user namespace separates them): a cell could exhaust them for
     * every process of that user. fanotify too. fs.watch then fails. */
    "inotify_init", "inotify_init1", "fanotify_init", NULL};

/* The new mount API answers ENOSYS, so callers fall back to mount(2),
 * which the cell cannot use without capabilities; clone3 answers ENOSYS so
 * glibc falls back to clone(2), whose flags the filter can inspect. */
static const char *const enosys_syscalls[] = {"fsopen",    "fsconfig",      "fsmount", "fspick", "move_mount",
                                              "open_tree", "mount_setattr", "clone3",  NULL};

static int add_list(scmp_filter_ctx ctx, const char *const *names, int errnum) {
  for (; *names; names++) {
    int nr = seccomp_syscall_resolve_name(*names);
    if (nr == __NR_SCMP_ERROR) continue; /* unknown to this libseccomp: absent here */
    int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(errnum), nr, 0);
    if (rc != 0) return rc;
  }
  return 0;
}

static scmp_filter_ctx build(cap_error *err) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) {
    cap_fail(err, CAP_E_INTERNAL, "seccomp_init failed");
    return NULL;
  }
  int rc = 0;
  /* Only the native ABI: i386 (int 0x80) and x32 system calls, whose
   * numbers this filter does not describe, fail with EPERM. */
  rc = rc ? rc : seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(EPERM));
  rc = rc ? rc : add_list(ctx, eperm_syscalls, EPERM);
  rc = rc ? rc : add_list(ctx, enosys_syscalls, ENOSYS);
  /* ioctl's request is an unsigned int: compare the low 32 bits only, so
   * high garbage bits cannot slip TIOCSTI past the filter. */
  rc = rc ? rc
          : seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                             SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, TIOCSTI));
  rc = rc ? rc
          : seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                             SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, TIOCLINUX));
  /* Nested user namespaces (bwrap's --disable-userns is the first line). */
  rc = rc ? rc
          : seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1,
                             SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
  rc = rc ? rc
          : seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                             SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
  /* One process per cell: no fork, vfork or process-creating clone (only
   * threads). This is the process ceiling, for root and unprivileged
   * hosts alike (RLIMIT_NPROC is per user and ignored for root). */
  rc = rc ? rc : seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(fork), 0);
  rc = rc ? rc : seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(vfork), 0);
  rc = rc ? rc
          : seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                             SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
  if (rc != 0) {
    cap_fail(err, CAP_E_INTERNAL, "cannot build seccomp filter: %s", strerror(-rc));
    seccomp_release(ctx);
    return NULL;
  }
  return ctx;
}

int seccomp_policy_memfd(size_t *bpf_len, cap_error *err) {
  scmp_filter_ctx ctx = build(err);
  if (!ctx) return -1;
  int fd = (int)syscall(SYS_memfd_create, "cell-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  int rc = fd < 0 ? -errno : seccomp_export_bpf(ctx, fd);
  seccomp_release(ctx);
  off_t len = fd >= 0 ? lseek(fd, 0, SEEK_CUR) : -1;
  if (rc != 0 || len <= 0 || lseek(fd, 0, SEEK_SET) != 0 ||
      fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) != 0) {
    if (fd >= 0) close(fd);
    cap_fail(err, CAP_E_INTERNAL, "cannot export seccomp filter");
    return -1;
  }
  *bpf_len = (size_t)len;
  return fd;
}

cap_code seccomp_policy_digest(char *hex, cap_error *err) {
  size_t len = 0;
  int fd = seccomp_policy_memfd(&len, err);
  if (fd < 0) return err->code;
  char *buf = NULL;
  size_t got = 0;
  so_read_result rc = so_read_bounded(fd, len, &buf, &got);
  close(fd);
  bool ok = rc == SO_READ_OK && got == len && digest_sha256_hex(buf, got, hex);
  free(buf);
  return ok ? CAP_OK : cap_fail(err, CAP_E_INTERNAL, "cannot digest seccomp filter");
}
