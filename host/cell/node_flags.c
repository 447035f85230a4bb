/* The Node flags every cell runs with, chosen from the attested version
 * (common/node_version.h): the permission-model flag, whether SIGUSR1 can
 * be disabled, and the memory Node reserves beyond the heap. */
#include "node_flags.h"

#include "host_state.h"
#include "node_version.h"

/* Flags follow the attested version (common/node_version.h). */
cap_code node_flags_select(host *h, cap_error *err) {
  node_version v;
  if (!node_version_parse(h->node_version, &v))
    return cap_fail(err, CAP_E_ATTEST_OUTPUT_INVALID, "unparseable Node version \"%s\"", h->node_version);
  if (!node_version_supported(v))
    return cap_fail(err, CAP_E_RUNTIME_UNSUPPORTED,
                    "Node %s is too old: the permission model needs Node " NODE_MIN_VERSION_TEXT " or newer",
                    h->node_version);
  h->permission_flag = node_permission_flag(v);
  h->disable_sigusr1 = node_can_disable_sigusr1(v);
  h->node_reserved_data_mb = node_reserved_data_mb(v);
  return CAP_OK;
}
