#include "staging.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safe_open.h"

cap_code staging_create(staging *s, cap_error *err) {
  memset(s, 0, sizeof *s);
  s->dirfd = -1;
  const char *base = getenv("TMPDIR");
  if (!base || !so_is_plain_absolute(base)) base = "/tmp";
  snprintf(s->dir, sizeof s->dir, "%s/dsh-capsule-XXXXXX", base);
  if (!mkdtemp(s->dir)) {
    s->dir[0] = '\0';
    return cap_fail(err, CAP_E_STAGING_FAILED, "cannot create staging directory in %s: %s",
                    base, strerror(errno));
  }
  /* The launcher reopens staged files without symlinks: check that now. */
  s->dirfd = so_open(AT_FDCWD, s->dir, O_PATH | O_DIRECTORY);
  if (s->dirfd < 0) {
    cap_fail(err, CAP_E_STAGING_FAILED, "staging directory %s is reached through a symlink: %s",
             s->dir, strerror(errno));
    rmdir(s->dir);
    s->dir[0] = '\0';
    return err->code;
  }
  return CAP_OK;
}

cap_code staging_add(staging *s, const char *name, const void *bytes, size_t len,
                     staged_file *out, cap_error *err) {
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
  if (!digest_sha256_hex(bytes, len, out->sha256))
    return cap_fail(err, CAP_E_INTERNAL, "sha256 failed");
  return CAP_OK;
}

void staging_remove_from_signal(staging *s) {
  if (!s->dir[0]) return;
  int dfd = openat(AT_FDCWD, s->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  for (size_t i = 0; i < s->count && dfd >= 0; i++) unlinkat(dfd, s->names[i], 0);
  if (dfd >= 0) close(dfd);
  rmdir(s->dir);
}

void staging_remove(staging *s) {
  staging_remove_from_signal(s);
  if (s->dirfd >= 0) close(s->dirfd);
  s->dirfd = -1;
  s->dir[0] = '\0';
  s->count = 0;
}
