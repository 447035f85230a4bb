/* Capsule bundle reader (libarchive), from memory, with small limits so a
 * decompression bomb shows up as a refusal rather than as memory use. */
#include <stddef.h>
#include <stdint.h>

#include "admit/bundle.h"
#include "admit/config.h"
#include "fuzz_reach.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  host_limits lim = {.max_manifest_bytes = 8192, .max_artifact_bytes = 65536};
  bundle_contents b;
  cap_error err = {0};
  cap_code rc = bundle_read_memory(data, size, &lim, &b, &err);
  fuzz_reached("bundle", rc);
  if (rc == CAP_OK) bundle_contents_free(&b);
  return 0;
}
