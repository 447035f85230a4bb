/* The one rule for which Node runs guests, and with which flags. Node
 * 20.11+ is required (permission model, --disable-warning); 22.13+ and
 * 23.5+ take the stable --permission flag; 22.14+ and 23.7+ can disable the
 * SIGUSR1 inspector. */
#ifndef NODE_VERSION_H
#define NODE_VERSION_H

#include <stdbool.h>

typedef struct {
  int major, minor, patch;
} node_version;

#define NODE_MIN_VERSION_TEXT "20.11"

/* Parses "vMAJOR.MINOR.PATCH" (trailing text such as a newline ignored). */
bool node_version_parse(const char *text, node_version *v);
bool node_version_supported(node_version v);
/* "--permission" or "--experimental-permission". */
const char *node_permission_flag(node_version v);
bool node_can_disable_sigusr1(node_version v);

#endif
