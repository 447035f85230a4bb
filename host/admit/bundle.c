#include "bundle.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle_gunzip.h"
#include "config.h"
#include "safe_open.h"

#define BUNDLE_MAX_ENTRIES 2

/* Exactly one container, tar, read from the stream bundle_gunzip.c
 * inflates: libarchive gets no filter of its own to run. */
static struct archive *reader(void) {
  struct archive *a = archive_read_new();
  if (a) archive_read_support_format_tar(a);
  return a;
}

/* What the inflated tar stream may hold: both entries at their limits,
 * plus headers, padding and the end-of-archive blocks. */
static size_t inflated_max(const host_limits *lim) {
  return (size_t)lim->max_manifest_bytes + (size_t)lim->max_artifact_bytes + (1u << 20);
}

/* A libarchive failure, named by the gzip layer when it was that layer. */
static cap_code archive_failure(struct archive *a, const bundle_gunzip *g, const char *what, cap_error *err) {
  if (bundle_gunzip_failure(g, err)) return err->code;
  return cap_fail(err, CAP_E_BUNDLE_FORMAT, "%s: %s", what,
                  archive_error_string(a) ? archive_error_string(a) : "unreadable");
}

static cap_code read_entry_data(struct archive *a, const bundle_gunzip *g, size_t limit, cap_code too_large,
                                const char *name, char **out, size_t *out_len, cap_error *err) {
  size_t cap = 0, len = 0;
  char *buf = NULL;
  for (;;) {
    char chunk[65536];
    la_ssize_t n = archive_read_data(a, chunk, sizeof chunk);
    if (n < 0) {
      free(buf);
      char what[300];
      snprintf(what, sizeof what, "bundle entry %s is corrupt", name);
      return archive_failure(a, g, what, err);
    }
    if (n == 0) break;
    if (len + (size_t)n > limit) {
      free(buf);
      return cap_fail(err, too_large, "bundle entry %s inflates past %zu bytes", name, limit);
    }
    if (len + (size_t)n > cap) {
      cap = (len + (size_t)n) * 2 > limit ? limit + 1 : (len + (size_t)n) * 2;
      char *p = realloc(buf, cap + 1);
      if (!p) {
        free(buf);
        return cap_fail(err, CAP_E_INTERNAL, "out of memory");
      }
      buf = p;
    }
    memcpy(buf + len, chunk, (size_t)n);
    len += (size_t)n;
  }
  if (!buf) buf = malloc(1);
  if (!buf) return cap_fail(err, CAP_E_INTERNAL, "out of memory");
  buf[len] = '\0';
  *out = buf;
  *out_len = len;
  return CAP_OK;
}

static cap_code read_all(struct archive *a, const bundle_gunzip *g, const host_limits *lim,
                         bundle_contents *out, cap_error *err) {
  memset(out, 0, sizeof *out);
  struct archive_entry *e;
  size_t regular = 0;
  for (;;) {
    int r = archive_read_next_header(a, &e);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK) return archive_failure(a, g, "not a gzip-compressed tar bundle", err);
    const char *raw = archive_entry_pathname(e);
    if (!raw) return cap_fail(err, CAP_E_BUNDLE_ENTRY_UNSAFE, "bundle entry without a name");
    const char *name = strncmp(raw, "./", 2) == 0 ? raw + 2 : raw;
    if (archive_entry_hardlink(e))
      return cap_fail(err, CAP_E_BUNDLE_ENTRY_TYPE, "bundle entry %s is a hard link", name);
    mode_t type = archive_entry_filetype(e);
    if (type != AE_IFREG)
      return cap_fail(err, CAP_E_BUNDLE_ENTRY_TYPE, "bundle entry %s is not a regular file (%s)", name,
                      type == AE_IFLNK   ? "symlink"
                      : type == AE_IFDIR ? "directory"
                      : type == AE_IFIFO ? "FIFO"
                      : type == AE_IFCHR ? "character device"
                      : type == AE_IFBLK ? "block device"
                                         : "special");
    if (!so_is_plain_relative(name))
      return cap_fail(err, CAP_E_BUNDLE_ENTRY_UNSAFE, "bundle entry \"%.200s\" is not a plain relative name",
                      raw);
    bool is_manifest = strcmp(name, BUNDLE_MANIFEST_NAME) == 0;
    if ((is_manifest && out->manifest) || (!is_manifest && out->other && strcmp(out->other_name, name) == 0))
      return cap_fail(err, CAP_E_BUNDLE_DUPLICATE_ENTRY, "bundle holds %s twice", name);
    if (++regular > BUNDLE_MAX_ENTRIES || (!is_manifest && out->other))
      return cap_fail(err, CAP_E_BUNDLE_EXTRA_ENTRY,
                      "bundle holds more than capsule.json and one artifact (%s)", name);
    size_t limit = (size_t)(is_manifest ? lim->max_manifest_bytes : lim->max_artifact_bytes);
    cap_code too_large = is_manifest ? CAP_E_MANIFEST_TOO_LARGE : CAP_E_ARTIFACT_TOO_LARGE;
    /* The header's claim is checked first, the bytes themselves as they inflate. */
    if (archive_entry_size_is_set(e) && archive_entry_size(e) > (la_int64_t)limit)
      return cap_fail(err, too_large, "bundle entry %s declares %lld bytes (limit %zu)", name,
                      (long long)archive_entry_size(e), limit);
    if (is_manifest) {
      if (read_entry_data(a, g, limit, too_large, name, &out->manifest, &out->manifest_len, err))
        return err->code;
    } else {
      snprintf(out->other_name, sizeof out->other_name, "%s", name);
      if (read_entry_data(a, g, limit, too_large, name, &out->other, &out->other_len, err)) return err->code;
    }
  }
  if (!out->manifest)
    return cap_fail(err, CAP_E_BUNDLE_MISSING_ENTRY, "bundle has no %s", BUNDLE_MANIFEST_NAME);
  return CAP_OK;
}

/* fd >= 0: read from it; otherwise from mem[0..len). */
static cap_code read_bundle(int fd, const void *mem, size_t len, const host_limits *lim, bundle_contents *out,
                            cap_error *err) {
  memset(out, 0, sizeof *out);
  struct archive *a = reader();
  if (!a) return cap_fail(err, CAP_E_INTERNAL, "out of memory");
  bundle_gunzip *g = bundle_gunzip_open(a, fd, mem, len, inflated_max(lim), err);
  cap_code rc = g ? read_all(a, g, lim, out, err) : err->code;
  if (!rc) rc = bundle_gunzip_drain(a, g, out->sha256, err);
  archive_read_free(a);
  bundle_gunzip_free(g);
  if (rc) bundle_contents_free(out);
  return rc;
}

cap_code bundle_read_fd(int fd, const host_limits *lim, bundle_contents *out, cap_error *err) {
  return read_bundle(fd, NULL, 0, lim, out, err);
}

cap_code bundle_read_memory(const void *buf, size_t len, const host_limits *lim, bundle_contents *out,
                            cap_error *err) {
  return read_bundle(-1, buf, len, lim, out, err);
}

cap_code bundle_read_path(const char *path, const host_limits *lim, bundle_contents *out, cap_error *err) {
  memset(out, 0, sizeof *out);
  struct stat st;
  int fd = so_open_regular(AT_FDCWD, path, &st);
  if (fd == SO_NOT_REGULAR) return cap_fail(err, CAP_E_BUNDLE_OPEN, "bundle %s is not a regular file", path);
  if (fd < 0)
    return cap_fail(err, CAP_E_BUNDLE_OPEN, "bundle %s: %s", path,
                    errno == ELOOP ? "reached through a symlink" : strerror(errno));
  cap_code rc = bundle_read_fd(fd, lim, out, err);
  close(fd);
  return rc;
}

void bundle_contents_free(bundle_contents *b) {
  free(b->manifest);
  free(b->other);
  b->manifest = b->other = NULL;
}

static int add_entry(struct archive *a, const char *name, const char *data, size_t len) {
  struct archive_entry *e = archive_entry_new();
  archive_entry_set_pathname(e, name);
  archive_entry_set_filetype(e, AE_IFREG);
  archive_entry_set_perm(e, 0644);
  archive_entry_set_size(e, (la_int64_t)len);
  archive_entry_set_mtime(e, 0, 0);
  archive_entry_set_uid(e, 0);
  archive_entry_set_gid(e, 0);
  int rc = archive_write_header(a, e);
  if (rc == ARCHIVE_OK && len && archive_write_data(a, data, len) != (la_ssize_t)len) rc = ARCHIVE_FATAL;
  archive_entry_free(e);
  return rc;
}

cap_code bundle_write_fd(int fd, const char *manifest, size_t manifest_len, const char *artifact_name,
                         const char *artifact, size_t artifact_len, cap_error *err) {
  struct archive *a = archive_write_new();
  archive_write_set_format_ustar(a);
  archive_write_add_filter_gzip(a);
  /* No timestamp in the gzip header: the same inputs give the same bytes. */
  archive_write_set_filter_option(a, "gzip", "timestamp", NULL);
  int rc = archive_write_open_fd(a, fd);
  /* Sorted: "capsule.json" and the artifact, by name. */
  bool manifest_first = strcmp(BUNDLE_MANIFEST_NAME, artifact_name) < 0;
  if (rc == ARCHIVE_OK)
    rc = manifest_first ? add_entry(a, BUNDLE_MANIFEST_NAME, manifest, manifest_len)
                        : add_entry(a, artifact_name, artifact, artifact_len);
  if (rc == ARCHIVE_OK)
    rc = manifest_first ? add_entry(a, artifact_name, artifact, artifact_len)
                        : add_entry(a, BUNDLE_MANIFEST_NAME, manifest, manifest_len);
  if (rc == ARCHIVE_OK) rc = archive_write_close(a);
  cap_code code = rc == ARCHIVE_OK ? CAP_OK
                                   : cap_fail(err, CAP_E_BUNDLE_WRITE_FAILED, "cannot write the bundle: %s",
                                              archive_error_string(a));
  archive_write_free(a);
  return code;
}

cap_code bundle_write(const char *out_path, const char *manifest, size_t manifest_len,
                      const char *artifact_name, const char *artifact, size_t artifact_len, cap_error *err) {
  /* Written beside out_path under a fresh name and renamed into place: a
   * link planted at out_path is replaced, never written through, and no
   * half-written bundle ever bears the name. */
  char tmp[4200];
  int n = snprintf(tmp, sizeof tmp, "%s.%ld.partial", out_path, (long)getpid());
  if (n < 0 || (size_t)n >= sizeof tmp)
    return cap_fail(err, CAP_E_BUNDLE_WRITE_FAILED, "cannot write %s: the path is too long", out_path);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0)
    return cap_fail(err, CAP_E_BUNDLE_WRITE_FAILED, "cannot write %s: %s", out_path, strerror(errno));
  cap_code code = bundle_write_fd(fd, manifest, manifest_len, artifact_name, artifact, artifact_len, err);
  if (close(fd) != 0 && !code)
    code = cap_fail(err, CAP_E_BUNDLE_WRITE_FAILED, "cannot write %s: %s", out_path, strerror(errno));
  if (!code && rename(tmp, out_path) != 0)
    code = cap_fail(err, CAP_E_BUNDLE_WRITE_FAILED, "cannot put %s in place: %s", out_path, strerror(errno));
  if (code) unlink(tmp);
  return code;
}
