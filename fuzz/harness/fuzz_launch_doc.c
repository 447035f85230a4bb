/* Launcher side: the launch document parser, then the bwrap argv builder
 * on whatever it accepted (descriptor numbers are stand-ins). */
#include <stddef.h>
#include <stdint.h>

#include "bwrap_argv.h"
#include "launch_doc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  launch_doc doc;
  cap_error err = {0};
  if (launch_doc_parse((const char *)data, size, &doc, &err) != CAP_OK) return 0;
  int fds[LAUNCH_DOC_MAX_MOUNTS];
  for (size_t i = 0; i < doc.mount_count; i++) fds[i] = 6 + (int)i;
  argv_list argv;
  if (bwrap_argv_build(&doc, fds, 999, &argv, &err) == CAP_OK) argv_list_free(&argv);
  launch_doc_free(&doc);
  return 0;
}
