/* Capsule bundle reader (libarchive behind bundle_gunzip.c's bounded
 * inflate), with small limits so a decompression bomb shows up as a
 * refusal rather than as memory use. Each input is read twice, from memory
 * and from a file descriptor (a memfd, as admission reads a bundle file):
 * the two readers must agree on the outcome and on what they read. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "admit/bundle.h"
#include "admit/config.h"
#include "fuzz_reach.h"

static bool same_contents(const bundle_contents *a, const bundle_contents *b) {
  return a->manifest_len == b->manifest_len && a->other_len == b->other_len &&
         (!a->manifest_len || memcmp(a->manifest, b->manifest, a->manifest_len) == 0) &&
         (!a->other_len || memcmp(a->other, b->other, a->other_len) == 0) &&
         strcmp(a->other_name, b->other_name) == 0 && strcmp(a->sha256, b->sha256) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  host_limits lim = {.max_manifest_bytes = 8192, .max_artifact_bytes = 65536};
  bundle_contents from_memory, from_fd;
  cap_error err = {0}, fd_err = {0};
  cap_code rc = bundle_read_memory(data, size, &lim, &from_memory, &err);
  fuzz_reached("bundle", rc);
  int fd = memfd_create("fuzz-bundle", MFD_CLOEXEC);
  if (fd >= 0 && write(fd, data, size) == (ssize_t)size && lseek(fd, 0, SEEK_SET) == 0) {
    cap_code fd_rc = bundle_read_fd(fd, &lim, &from_fd, &fd_err);
    if (fd_rc != rc) abort(); /* the two readers disagree on the outcome */
    if (fd_rc == CAP_OK) {
      if (!same_contents(&from_memory, &from_fd)) abort();
      bundle_contents_free(&from_fd);
    }
  }
  if (fd >= 0) close(fd);
  if (rc == CAP_OK) bundle_contents_free(&from_memory);
  return 0;
}
