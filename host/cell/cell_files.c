/* The files every cell is given besides its guest, staged once per host:
 * the cell loader (cell-loader.cjs, embedded at build time), and the
 * placeholder guest of an attestation-only cell. */
#include "admit/staging.h"
#include "cell.h"
#include "cell_loader_cjs.h"
#include "host_state.h"

/* Everything a cell needs staged that is not the guest: the loader, and
 * the guest of an attestation-only cell (never loaded: the host sends no
 * "load" to that cell). */
static const char attest_only_guest[] = "// attestation-only cell: no guest is ever loaded\n";

cap_code cell_stage_files(host *h, cap_error *err) {
  if (!h->loader.path[0] &&
      staging_add(&h->stg, "cell-loader.cjs", cell_loader_cjs, cell_loader_cjs_len, &h->loader, err))
    return err->code;
  if (!h->attest_guest.path[0] && staging_add(&h->stg, "attest-only.mjs", attest_only_guest,
                                              sizeof attest_only_guest - 1, &h->attest_guest, err))
    return err->code;
  return CAP_OK;
}
