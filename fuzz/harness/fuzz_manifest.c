/* capsule.json parsing and validation. */
#include <stddef.h>
#include <stdint.h>

#include "admit/manifest.h"
#include "fuzz_reach.h"
#include "strict_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sj_limits lim = {32, 10000};
  manifest m;
  cap_error err = {0};
  cap_code rc = manifest_parse((const char *)data, size, &lim, 64, &m, &err);
  fuzz_reached("manifest", rc);
  if (rc == CAP_OK || m.json) manifest_free(&m);
  return 0;
}
