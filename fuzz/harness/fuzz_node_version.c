/* select_node_flags' inputs (common/node_version.c): the version string the
 * world probe reports, parsed, checked against the minimum, and mapped to
 * the permission flag and the SIGUSR1 switch the cells run with, the code
 * range added to the memory ceiling, and the end-of-life date doctor
 * warns with (each rule on every version, supported or not). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_reach.h"
#include "node_version.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char text[64];
  size_t n = size < sizeof text - 1 ? size : sizeof text - 1;
  memcpy(text, data, n);
  text[n] = '\0';
  node_version v;
  bool parsed = node_version_parse(text, &v);
  fuzz_reached_if("parse", parsed);
  if (!parsed) return 0;
  /* The end of a line's support is a date or unknown, never anything else. */
  const char *eol = node_end_of_life(v);
  fuzz_reached_if("end-of-life known", eol != NULL);
  if (eol && (strlen(eol) != 10 || eol[4] != '-' || eol[7] != '-')) abort();
  /* Only 24 and later reserve the code range, and exactly 512 MiB. */
  long long reserved = node_reserved_data_mb(v);
  if (reserved != (v.major >= 24 ? 512 : 0)) abort();
  fuzz_reached_if("supported", node_version_supported(v));
  if (!node_version_supported(v)) return 0;
  /* A version the host accepts is never older than the minimum... */
  if (v.major < 20 || (v.major == 20 && v.minor < 11)) abort();
  /* ...and always runs under one of the two permission flags. */
  const char *flag = node_permission_flag(v);
  if (!flag || (strcmp(flag, "--permission") != 0 && strcmp(flag, "--experimental-permission") != 0)) abort();
  (void)node_can_disable_sigusr1(v);
  return 0;
}
