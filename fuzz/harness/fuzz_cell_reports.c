/* The two reports a cell's helpers write to the host (host/cell/cell_reports.c):
 * bwrap's --info-fd JSON (the cell's init pid) and the launcher's refusal
 * status (a stable code and a message). Both are read into fixed buffers
 * and parsed strictly; the input is tried as each. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "cell/cell_reports.h"
#include "fuzz_reach.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pid_t pid = cell_reports_child_pid((const char *)data, size);
  if (pid < 0 || pid == 1) abort(); /* never the caller's init or a negative pid */
  fuzz_reached_if("info", pid > 0);
  cap_error err = {0};
  cap_code code = cell_reports_launcher_status((const char *)data, size, &err);
  if (code == CAP_OK || err.code != code) abort(); /* a refusal is always a failure */
  fuzz_reached("status", code);
  return 0;
}
