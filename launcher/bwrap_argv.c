/* The cell, as bwrap's argv: the one place that says what a cell is.
 * From a parsed launch document and the launcher's verified descriptors it
 * builds, in this order: fresh namespaces of every kind with a mandatory
 * user namespace and no nested one, no capabilities, a new session, death
 * with the launcher, an empty environment but HOME and PATH, the hostname
 * "capsule", a private /proc and /dev; an empty root whose only content is
 * a 0700 /tmp tmpfs (bounded) and each mount bound read-only from its
 * descriptor (never a path: the file the launcher verified is the file the
 * cell sees); the root and /dev then read-only; bwrap's info report, the
 * seccomp filter by descriptor; then Node with the permission model, read
 * grants derived from mount labels (the guest and each workspace file, no
 * directory), /tmp as scratch, no addons, the heap ceiling, and the loader
 * (or the startup snapshot) before the guest. Pure: no I/O, so the unit
 * tests (unit/test_bwrap_argv.c) and fuzz_launch_doc check it exactly.
 *
 * Two other bwrap argvs exist, on purpose, and neither is a cell: the
 * startup snapshot's build (host/attest/snapshot.c) and doctor's probes
 * (host/doctor.c). Neither runs a byte of guest code; each says at its
 * head how it differs from a cell and why. pytest/test_layout.py holds
 * this list: a bwrap argv anywhere else fails it. */
#include "bwrap_argv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch_contract.h"

static bool push(argv_list *l, const char *s) {
  if (l->count + 1 >= sizeof l->items / sizeof l->items[0]) return false;
  char *dup = strdup(s);
  if (!dup) return false;
  l->items[l->count++] = dup;
  l->items[l->count] = NULL;
  return true;
}

static bool push_num(argv_list *l, long long n) {
  char buf[32];
  snprintf(buf, sizeof buf, "%lld", n);
  return push(l, buf);
}

/* "--flag=" + value, for Node options that take a joined argument. */
static bool push_joined(argv_list *l, const char *flag, const char *value) {
  char buf[8192];
  int n = snprintf(buf, sizeof buf, "%s%s", flag, value);
  return n > 0 && (size_t)n < sizeof buf && push(l, buf);
}

void argv_list_free(argv_list *list) {
  for (size_t i = 0; i < list->count; i++) free(list->items[i]);
  list->count = 0;
}

cap_code bwrap_argv_build(const launch_doc *doc, const int *mount_fds, int seccomp_fd, argv_list *l,
                          cap_error *err) {
  static const char *const fixed[] = {
      "bwrap",
      /* Fresh user, PID, mount, network, IPC, UTS (and cgroup) namespaces;
       * --unshare-user makes the user namespace mandatory, not "try". */
      "--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL", "--die-with-parent",
      "--new-session", "--clearenv", "--setenv", "HOME", "/tmp", "--setenv", "PATH", "/runtime",
      /* The new UTS namespace starts as a copy of the host's: rename it. */
      "--hostname", LAUNCH_CELL_HOSTNAME, "--proc", "/proc", "--dev", "/dev", NULL};
  l->count = 0;
  l->items[0] = NULL;
  bool ok = true;
  for (const char *const *f = fixed; *f && ok; f++) ok = push(l, *f);
  if (doc->tmpfs_bytes > 0) ok = ok && push(l, "--size") && push_num(l, doc->tmpfs_bytes);
  ok = ok && push(l, "--perms") && push(l, "0700") && push(l, "--tmpfs") && push(l, "/tmp");
  const char *guest_dest = NULL;
  bool snapshot = false;
  for (size_t i = 0; i < doc->mount_count && ok; i++) {
    ok = push(l, "--ro-bind-fd") && push_num(l, mount_fds[i]) && push(l, doc->mounts[i].dest);
    if (doc->mounts[i].label == LD_GUEST) guest_dest = doc->mounts[i].dest;
    if (doc->mounts[i].label == LD_SNAPSHOT) snapshot = true;
  }
  /* The empty root itself becomes read-only once every mount point exists. */
  ok = ok && push(l, "--remount-ro") && push(l, "/");
  /* --dev is a tmpfs of its own (with /dev/shm) that the root's remount
   * does not cover: without this it is writable and unbounded. */
  ok = ok && push(l, "--remount-ro") && push(l, "/dev");
  ok = ok && push(l, "--info-fd") && push_num(l, LAUNCHER_INFO_FD);
  ok = ok && push(l, "--seccomp") && push_num(l, seccomp_fd);
  ok = ok && push(l, "--chdir") && push(l, "/tmp");
  /* "--" so that nothing after it can be read as a bwrap option. */
  ok = ok && push(l, "--") && push(l, LAUNCH_NODE_DEST);
  /* With the snapshot the loader is its main function; without it the
   * loader is the entry script, read under the /tmp grant: a read grant of
   * its own would be a third top-level grant, and Node 20 then lets the
   * guest list "/" (see THREAT_MODEL). */
  if (snapshot) ok = ok && push(l, "--snapshot-blob") && push(l, LAUNCH_SNAPSHOT_DEST);
  ok = ok && push(l, doc->permission_flag);
  /* Read permission: the guest artifact and workspace-read mounts only,
   * derived from labels; /tmp is the cell's private scratch space (and
   * holds the read-only loader). */
  ok = ok && push_joined(l, "--allow-fs-read=", guest_dest);
  for (size_t i = 0; i < doc->mount_count && ok; i++)
    if (doc->mounts[i].label == LD_WORKSPACE_READ)
      ok = push_joined(l, "--allow-fs-read=", doc->mounts[i].dest);
  ok = ok && push(l, "--allow-fs-read=/tmp/*") && push(l, "--allow-fs-write=/tmp/*");
  ok = ok && push(l, "--no-addons") && push(l, "--disable-warning=ExperimentalWarning");
  if (doc->disable_sigusr1) ok = ok && push(l, "--disable-sigusr1");
  if (doc->max_old_space_mb > 0) {
    char mb[32];
    snprintf(mb, sizeof mb, "%lld", doc->max_old_space_mb);
    ok = ok && push_joined(l, "--max-old-space-size=", mb);
  }
  ok = ok && push(l, "--");
  if (!snapshot) ok = ok && push(l, LAUNCH_LOADER_DEST);
  ok = ok && push(l, guest_dest);
  if (!ok) {
    argv_list_free(l);
    return cap_fail(err, CAP_E_LAUNCH_DOC_INVALID, "bwrap argv too long");
  }
  return CAP_OK;
}
