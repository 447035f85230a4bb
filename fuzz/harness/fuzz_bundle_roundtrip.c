/* bundle pack then read (host/admit/bundle.c): whatever manifest and artifact
 * bytes `capsule-host bundle` packs, the reader must give back exactly
 * those bytes under exactly those names, or refuse them only for a size
 * limit. Input: 2 bytes manifest length, 1 byte artifact-name choice, the
 * manifest, then the artifact. The bundle goes through a memfd
 * (bundle_write_fd: bundle_write itself renames a file into place). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "admit/bundle.h"
#include "admit/config.h"
#include "fuzz_reach.h"

static const char *const names[] = {"guest.mjs", "a.mjs", "zz-artifact.js", "capsule.jsonx"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int fd = -1;
  if (fd < 0) {
    fd = memfd_create("fuzz-bundle", MFD_CLOEXEC);
    if (fd < 0) return 0;
  }
  if (size < 3) return 0;
  size_t mlen = ((size_t)data[0] << 8 | data[1]) % (size - 2 + 1);
  const char *name = names[data[2] % (sizeof names / sizeof names[0])];
  const char *manifest = (const char *)data + 3;
  if (mlen > size - 3) mlen = size - 3;
  const char *artifact = manifest + mlen;
  size_t alen = size - 3 - mlen;
  cap_error err = {0};
  if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0) return 0;
  if (bundle_write_fd(fd, manifest, mlen, name, artifact, alen, &err) != CAP_OK) abort();
  if (lseek(fd, 0, SEEK_SET) != 0) return 0;
  /* Limits the inputs can pass (max_len 20000), so both size refusals are reached. */
  host_limits lim = {.max_manifest_bytes = 4096, .max_artifact_bytes = 12288};
  bundle_contents b;
  cap_error rerr = {0};
  if (bundle_read_fd(fd, &lim, &b, &rerr) != CAP_OK) {
    /* The only acceptable refusal of what we packed: a size limit. */
    if (rerr.code != CAP_E_MANIFEST_TOO_LARGE && rerr.code != CAP_E_ARTIFACT_TOO_LARGE) abort();
    fuzz_reached("read", rerr.code);
    return 0;
  }
  if (b.manifest_len != mlen || memcmp(b.manifest, manifest, mlen) != 0) abort();
  if (b.other_len != alen || strcmp(b.other_name, name) != 0 ||
      (alen && memcmp(b.other, artifact, alen) != 0))
    abort();
  fuzz_reached("read", CAP_OK);
  bundle_contents_free(&b);
  return 0;
}
