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
/* MiB of address space Node reserves at start that RLIMIT_DATA counts and
 * no guest can use: V8's 512 MiB code range on Node 24 (measured: Node 24
 * does not start under a 512 MiB RLIMIT_DATA; with 768 MiB a guest's
 * buffers stop at 192 MiB, where Node 20 and 22 stop at 192 MiB under
 * 256). The host adds it to maxCellMemoryMb, so the ceiling a guest meets
 * is the same on every supported line. */
long long node_reserved_data_mb(node_version v);
/* The day upstream ends a line's support ("2026-04-30" for 20), or NULL
 * for a line this table does not know. doctor warns past it: the cells run
 * the node the host finds, and no security fix reaches an ended line. */
const char *node_end_of_life(node_version v);

#endif
