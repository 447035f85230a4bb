/* Launcher side: the launch document parser, then the bwrap argv builder
 * on whatever it accepted (descriptor numbers are stand-ins). Whatever it
 * accepts, the host's encoder writes back into a document it accepts again
 * with the same mounts: the two sides of the contract agree. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bwrap_argv.h"
#include "fuzz_reach.h"
#include "launch_doc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  launch_doc doc;
  cap_error err = {0};
  cap_code rc = launch_doc_parse((const char *)data, size, &doc, &err);
  fuzz_reached("parse", rc);
  if (rc != CAP_OK) return 0;
  char *again = launch_doc_encode(&doc, &err);
  if (!again) abort();
  launch_doc round;
  if (launch_doc_parse(again, strlen(again), &round, &err) != CAP_OK || round.mount_count != doc.mount_count)
    abort();
  for (size_t i = 0; i < doc.mount_count; i++)
    if (round.mounts[i].label != doc.mounts[i].label || strcmp(round.mounts[i].dest, doc.mounts[i].dest) != 0)
      abort();
  launch_doc_free(&round);
  free(again);
  int fds[LAUNCH_DOC_MAX_MOUNTS];
  for (size_t i = 0; i < doc.mount_count; i++) fds[i] = 6 + (int)i;
  argv_list argv;
  rc = bwrap_argv_build(&doc, fds, 999, &argv, &err);
  fuzz_reached("argv", rc);
  if (rc == CAP_OK) argv_list_free(&argv);
  launch_doc_free(&doc);
  return 0;
}
