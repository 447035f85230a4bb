/* capsule.json parsing and validation. */
#include <stddef.h>
#include <stdint.h>

#include "manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sj_limits lim = {32, 10000};
  manifest m;
  cap_error err = {0};
  if (manifest_parse((const char *)data, size, &lim, 64, &m, &err) == CAP_OK || m.json)
    manifest_free(&m);
  return 0;
}
