/* The two reports a cell's helpers write to the host, read into fixed
 * buffers and parsed strictly (fuzz_cell_reports drives both): bwrap's
 * --info-fd JSON, which names the cell's init, and the launcher's refusal
 * status, which names a stable code and a message. */
#ifndef CELL_REPORTS_H
#define CELL_REPORTS_H

#include <stddef.h>
#include <sys/types.h>

#include "cap_error.h"

/* The init pid in bwrap's --info-fd JSON; 0 when there is none (never 1,
 * never negative). */
pid_t cell_reports_child_pid(const char *buf, size_t len);
/* The launcher's refusal as a code in err, and that code: the one it names
 * when it names a documented one other than OK, LAUNCH_FAILED otherwise. */
cap_code cell_reports_launcher_status(const char *buf, size_t len, cap_error *err);

#endif
