#include "pin_cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bundle.h"
#include "capsule.h"
#include "config.h"
#include "digest.h"
#include "safe_open.h"

/* capsule.json again with integrity.sha256 = hex, in the layout the
 * examples use (two-space indent, keys in their order). */
static cap_code rewrite(int dirfd, const char *mtext, size_t mlen, const char *hex, cap_error *err) {
  json_t *m = json_loadb(mtext, mlen, 0, NULL);
  json_t *integrity = json_object_get(m, "integrity");
  if (!json_is_object(integrity) || json_object_set_new(integrity, "sha256", json_string(hex))) {
    json_decref(m);
    return cap_fail(err, CAP_E_MANIFEST_INVALID, "capsule.json has no integrity object to pin");
  }
  char *text = json_dumps(m, JSON_INDENT(2));
  json_decref(m);
  char tmp[64];
  snprintf(tmp, sizeof tmp, ".capsule.json.pin-%ld", (long)getpid());
  int fd = text ? openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644) : -1;
  bool ok = fd >= 0 && so_write_all(fd, text, strlen(text)) && so_write_all(fd, "\n", 1) && fsync(fd) == 0;
  if (fd >= 0) close(fd);
  free(text);
  if (ok && renameat(dirfd, tmp, dirfd, BUNDLE_MANIFEST_NAME) == 0) return CAP_OK;
  if (fd >= 0) unlinkat(dirfd, tmp, 0);
  return cap_fail(err, CAP_E_MANIFEST_INVALID, "capsule.json could not be rewritten in place");
}

cap_code pin_cli_run(const char *dir, const host_limits *lim, json_t **report, cap_error *err) {
  *report = NULL;
  capsule_dir d;
  char hex[SHA256_HEX_LEN + 1];
  cap_code rc = capsule_dir_read(dir, lim, &d, err);
  if (!rc && !digest_sha256_hex(d.artifact, d.artifact_len, hex))
    rc = cap_fail(err, CAP_E_INTERNAL, "cannot hash the artifact");
  const manifest *m = &d.cap.m;
  bool changed = !rc && strcmp(m->sha256 ? m->sha256 : "", hex) != 0;
  int dirfd = changed ? so_open(AT_FDCWD, dir, O_PATH | O_DIRECTORY) : -1;
  if (changed && dirfd < 0)
    rc = cap_fail(err, CAP_E_CAPSULE_ROOT_INVALID, "%s: %s", dir, so_open_errno_text(errno));
  if (!rc && changed) rc = rewrite(dirfd, d.manifest_text, d.manifest_len, hex, err);
  if (dirfd >= 0) close(dirfd);
  if (!rc)
    *report = json_pack("{s:s,s:s,s:s,s:s?,s:b}", "capsule", dir, "entry", m->entry, "sha256", hex,
                        "previousSha256", m->sha256, "changed", changed);
  capsule_dir_free(&d);
  return rc;
}
