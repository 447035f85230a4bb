/* A fresh cell for one capsule, started and asked to describe itself:
 * the first step of every describe cell and every call cell. */
#include <stdlib.h>

#include "cell.h"
#include "clock.h"
#include "host.h"

cap_code host_described_cell(host *h, loaded_capsule *cap, cell *c, bool *started,
                             json_t **reply, cap_error *err) {
  *reply = NULL;
  *started = false;
  char *doc = host_launch_doc(h, &cap->guest, cap, err);
  if (!doc) return err->code;
  cap_code rc = cell_start_launcher(c, h->launcher, doc, &h->cfg.limits, err);
  free(doc);
  if (rc) return rc;
  *started = true;
  long long deadline = mono_ms() + h->cfg.limits.startup_timeout_ms;
  json_t *req = json_pack("{s:s,s:s}", "type", "describe", "protocol", MANIFEST_PROTOCOL);
  rc = cell_send(c, req, deadline, CAP_E_CELL_START_TIMEOUT, err);
  json_decref(req);
  if (!rc) rc = cell_expect(c, "describe.result", deadline, CAP_E_CELL_START_TIMEOUT, reply, err);
  return rc;
}

