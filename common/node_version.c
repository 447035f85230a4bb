#include "node_version.h"

#include <stdio.h>

static bool at_least(node_version v, int major, int minor) {
  return v.major > major || (v.major == major && v.minor >= minor);
}

bool node_version_parse(const char *text, node_version *v) {
  return text && sscanf(text, "v%d.%d.%d", &v->major, &v->minor, &v->patch) == 3;
}

bool node_version_supported(node_version v) { return at_least(v, 20, 11); }

const char *node_permission_flag(node_version v) {
  bool stable = at_least(v, 23, 5) || (v.major == 22 && v.minor >= 13);
  return stable ? "--permission" : "--experimental-permission";
}

bool node_can_disable_sigusr1(node_version v) {
  return at_least(v, 23, 7) || (v.major == 22 && v.minor >= 14);
}
