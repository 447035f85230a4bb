#include "node_version.h"

#include <stdio.h>

static bool at_least(node_version v, int major, int minor) {
  return v.major > major || (v.major == major && v.minor >= minor);
}

bool node_version_parse(const char *text, node_version *v) {
  return text && sscanf(text, "v%d.%d.%d", &v->major, &v->minor, &v->patch) == 3;
}

bool node_version_supported(node_version v) {
  return at_least(v, 20, 11);
}

const char *node_permission_flag(node_version v) {
  bool stable = at_least(v, 23, 5) || (v.major == 22 && v.minor >= 13);
  return stable ? "--permission" : "--experimental-permission";
}

const char *node_end_of_life(node_version v) {
  switch (v.major) {
    case 20: return "2026-04-30";
    case 21: return "2024-06-01";
    case 22: return "2027-04-30";
    case 23: return "2025-06-01";
    case 24: return "2028-04-30";
    case 25: return "2026-06-01";
    case 26: return "2029-04-30";
    default: return NULL;
  }
}

long long node_reserved_data_mb(node_version v) {
  return v.major >= 24 ? 512 : 0;
}

bool node_can_disable_sigusr1(node_version v) {
  return at_least(v, 23, 7) || (v.major == 22 && v.minor >= 14);
}
