/* The launcher's whole decision, from the launch document's descriptor to
 * bwrap's argv: read and parse the document, open and verify every source
 * by descriptor, build the cell filter and check it against the attested
 * digest, build the argv. It changes nothing in the process but the
 * descriptors it opens, so fuzz/harness/fuzz_launcher.c can run it; main
 * then applies the ceilings and execs bwrap. */
#ifndef LAUNCH_PREPARE_H
#define LAUNCH_PREPARE_H

#include "bwrap_argv.h"
#include "cap_error.h"
#include "launch_doc.h"

typedef struct {
  launch_doc doc;
  bool doc_parsed;
  int bwrap_fd;
  int mount_fds[LAUNCH_DOC_MAX_MOUNTS];
  size_t mount_fd_count;
  int seccomp_fd;
  int highest_fd; /* the largest descriptor bwrap is handed (for the open-files ceiling) */
  argv_list argv;
  bool argv_built;
} launch_plan;

/* max_doc_bytes: LAUNCH_DOC_MAX_BYTES in the launcher; the fuzz harness
 * passes less so that the cap is within its inputs' reach. On failure err
 * says why (LAUNCH_DOC_INVALID, LAUNCH_SOURCE_MISMATCH) and the plan holds
 * whatever was opened: launch_plan_close releases it. */
cap_code launch_prepare(int doc_fd, size_t max_doc_bytes, launch_plan *plan, cap_error *err);
void launch_plan_close(launch_plan *plan);

#endif
