/* The one way a cell for a guest starts: its launch document
 * (launch_document.c) handed to a new capsule-launcher. */
#include <stdlib.h>

#include "cell.h"
#include "cell_given.h"
#include "host.h"

cap_code host_start_cell(const host *h, const staged_file *guest, const loaded_capsule *cap,
                         cell *c, cap_error *err) {
  char *doc = host_launch_doc(h, guest, cap, err);
  if (!doc) return err->code;
  cap_code rc = cell_start_launcher(c, h->launcher, doc, &h->cfg.limits, err);
  free(doc);
  return rc;
}
