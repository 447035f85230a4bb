#include "staging.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safe_open.h"

/* Removes the regular files of a dead host's directory, then the directory;
 * anything else inside (a directory, a link) leaves it in place. */
static bool remove_dead(int parent, const char *name, int dfd) {
  DIR *d = fdopendir(dup(dfd));
  if (!d) return false;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    struct stat st;
    if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
      unlinkat(dfd, e->d_name, 0);
  }
  closedir(d);
  return unlinkat(parent, name, AT_REMOVEDIR) == 0;
}

int staging_sweep(const char *base) {
  int parent = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (parent < 0) return 0;
  DIR *d = fdopendir(dup(parent));
  int removed = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (strncmp(e->d_name, STAGING_PREFIX, strlen(STAGING_PREFIX)) != 0) continue;
    int dfd = openat(parent, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) continue;
    struct stat st;
    int lock = openat(dfd, STAGING_LOCK_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    /* Only this user's directories, and only when no host holds the lock. */
    if (lock >= 0 && fstat(dfd, &st) == 0 && st.st_uid == geteuid() && flock(lock, LOCK_EX | LOCK_NB) == 0 &&
        remove_dead(parent, e->d_name, dfd))
      removed++;
    if (lock >= 0) close(lock);
    close(dfd);
  }
  if (d) closedir(d);
  close(parent);
  return removed;
}

/* The lock file appears under its final name already locked (created under
 * a temporary name, locked, renamed), so a sweeper never sees it free. */
static cap_code take_owner_lock(staging *s, cap_error *err) {
  static const char tmp_name[] = ".owner.lock.new";
  s->lockfd = openat(s->dirfd, tmp_name, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
  if (s->lockfd < 0 || flock(s->lockfd, LOCK_EX | LOCK_NB) != 0 ||
      renameat(s->dirfd, tmp_name, s->dirfd, STAGING_LOCK_NAME) != 0) {
    int e = errno;
    unlinkat(s->dirfd, tmp_name, 0);
    return cap_fail(err, CAP_E_STAGING_FAILED, "cannot lock staging directory %s: %s", s->dir, strerror(e));
  }
  return CAP_OK;
}

cap_code staging_create(staging *s, cap_error *err) {
  memset(s, 0, sizeof *s);
  s->dirfd = s->lockfd = -1;
  const char *base = getenv("TMPDIR");
  if (!base || !so_is_plain_absolute(base)) base = "/tmp";
  staging_sweep(base);
  snprintf(s->dir, sizeof s->dir, "%s/" STAGING_PREFIX "XXXXXX", base);
  if (!mkdtemp(s->dir)) {
    s->dir[0] = '\0';
    return cap_fail(err, CAP_E_STAGING_FAILED, "cannot create staging directory in %s: %s", base,
                    strerror(errno));
  }
  /* The launcher reopens staged files without symlinks: check that now. */
  s->dirfd = so_open(AT_FDCWD, s->dir, O_PATH | O_DIRECTORY);
  if (s->dirfd < 0) {
    cap_fail(err, CAP_E_STAGING_FAILED, "staging directory %s is reached through a symlink: %s", s->dir,
             strerror(errno));
    rmdir(s->dir);
    s->dir[0] = '\0';
    return err->code;
  }
  if (take_owner_lock(s, err)) {
    staging_remove(s);
    return err->code;
  }
  return CAP_OK;
}

cap_code staging_add(staging *s, const char *name, const void *bytes, size_t len, staged_file *out,
                     cap_error *err) {
  if (s->count == STAGING_MAX_FILES || strlen(name) >= sizeof s->names[0])
    return cap_fail(err, CAP_E_STAGING_FAILED, "too many staged files");
  int fd = openat(s->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
  if (fd < 0) return cap_fail(err, CAP_E_STAGING_FAILED, "cannot stage %s: %s", name, strerror(errno));
  snprintf(s->names[s->count++], sizeof s->names[0], "%s", name);
  struct stat st;
  bool ok = so_write_all(fd, bytes, len) && fsync(fd) == 0 && fstat(fd, &st) == 0;
  close(fd);
  if (!ok) return cap_fail(err, CAP_E_STAGING_FAILED, "cannot write staged %s", name);
  snprintf(out->path, sizeof out->path, "%s/%s", s->dir, name);
  out->dev = (unsigned long long)st.st_dev;
  out->ino = (unsigned long long)st.st_ino;
  if (!digest_sha256_hex(bytes, len, out->sha256)) return cap_fail(err, CAP_E_INTERNAL, "sha256 failed");
  return CAP_OK;
}

void staging_remove_from_signal(staging *s) {
  if (!s->dir[0]) return;
  int dfd = openat(AT_FDCWD, s->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  for (size_t i = 0; i < s->count && dfd >= 0; i++) unlinkat(dfd, s->names[i], 0);
  if (dfd >= 0) unlinkat(dfd, STAGING_LOCK_NAME, 0);
  if (dfd >= 0) close(dfd);
  rmdir(s->dir);
}

cap_code staging_reserve(staging *s, const char *name, cap_error *err) {
  if (s->count == STAGING_MAX_FILES || strlen(name) >= sizeof s->names[0])
    return cap_fail(err, CAP_E_INTERNAL, "staging is full");
  snprintf(s->names[s->count++], sizeof s->names[0], "%s", name);
  return CAP_OK;
}

void staging_remove(staging *s) {
  staging_remove_from_signal(s);
  if (s->dirfd >= 0) close(s->dirfd);
  if (s->lockfd >= 0) close(s->lockfd);
  s->dirfd = s->lockfd = -1;
  s->dir[0] = '\0';
  s->count = 0;
}
