/* A fresh cell for one capsule, started, told to load its guest and asked
 * to describe itself: the first step of every describe cell and every call
 * cell (a warm cell starts the same way and is told to load later). */
#include "described_cell.h"

#include <stdlib.h>

#include "admit/capsule.h"
#include "admit/config.h"
#include "admit/manifest.h"
#include "cell.h"
#include "clock.h"
#include "host_state.h"

cap_code described_cell_start(host *h, loaded_capsule *cap, cell *c, bool *started, json_t **reply,
                              cap_error *err) {
  *reply = NULL;
  *started = false;
  cap_code rc = cell_start_for_capsule(h, &cap->guest, cap, c, err);
  if (rc) return rc;
  *started = true;
  return described_cell_load(c, reply, err);
}

cap_code described_cell_load(cell *c, json_t **reply, cap_error *err) {
  long long deadline = mono_ms() + c->lim->startup_timeout_ms;
  /* Written together: the loader reads exactly the "load" frame, so
   * "describe" waits in the pipe for the guest. */
  json_t *load = json_pack("{s:s}", "type", "load");
  json_t *req = json_pack("{s:s,s:s}", "type", "describe", "protocol", MANIFEST_PROTOCOL);
  cap_code rc = cell_send(c, load, deadline, CAP_E_CELL_START_TIMEOUT, err);
  if (!rc) rc = cell_send(c, req, deadline, CAP_E_CELL_START_TIMEOUT, err);
  json_decref(load);
  json_decref(req);
  if (!rc && !c->loader_ready)
    rc = cell_expect(c, "loader.ready", deadline, CAP_E_CELL_START_TIMEOUT, NULL, err);
  if (!rc) c->loader_ready = true;
  if (!rc) rc = cell_expect(c, "describe.result", deadline, CAP_E_CELL_START_TIMEOUT, reply, err);
  return rc;
}
