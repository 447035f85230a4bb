/* Deployment config and policy parsing. */
#include <stddef.h>
#include <stdint.h>

#include "admit/config.h"
#include "fuzz_reach.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  host_config cfg;
  cap_error err = {0};
  fuzz_reached("config", config_parse((const char *)data, size, &cfg, &err));
  config_free(&cfg);
  return 0;
}
