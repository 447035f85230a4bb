/* The one way a cell for a guest starts: its launch document
 * (launch_document.c) handed to a new capsule-launcher. */
#include <stdlib.h>

#include "cell.h"
#include "host_state.h"
#include "launch_document.h"

cap_code cell_start_for_capsule(const host *h, const staged_file *guest, const loaded_capsule *cap, cell *c,
                                cap_error *err) {
  char *doc = launch_document_build(h, guest, cap, err);
  if (!doc) return err->code;
  cap_code rc = cell_start_launcher(c, h->launcher, doc, &h->cfg.limits, err);
  free(doc);
  return rc;
}
