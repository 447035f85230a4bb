/* Resource ceilings of a cell: set on the launcher itself just before it
 * execs bwrap, so bwrap and every process of the cell inherit them. */
#ifndef CEILINGS_H
#define CEILINGS_H

#include "cap_error.h"
#include "launch_doc.h"

/* Descriptors bwrap opens on top of the ones the launcher hands it
 * (proc, dev, tmpfs, info and seccomp handling). Measured: bwrap 0.8.0
 * needs fewer than 16; the margin is for other versions. */
#define CEILINGS_BWRAP_FD_MARGIN 32

/* highest_fd: the largest descriptor the launcher passes to bwrap.
 * Fails with LAUNCH_DOC_INVALID when openFiles leaves bwrap no room, and
 * LAUNCH_FAILED when the kernel refuses a limit. */
cap_code ceilings_apply(const ld_ceilings *c, int highest_fd, cap_error *err);

#endif
