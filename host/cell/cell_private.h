/* Shared inside the cell_*.c files only: not part of the cell API. */
#ifndef CELL_PRIVATE_H
#define CELL_PRIVATE_H

#include "cell.h"

/* What one poll round did; PUMP_FAILED leaves the code in err. */
typedef enum { PUMP_PROGRESS, PUMP_TIMED_OUT, PUMP_FAILED } pump_result;

void cell_close_fd(int *fd);
/* Reaps the launcher/bwrap process if it exited (non-blocking). */
void cell_reap(cell *c);
/* Reads what is available from fd into a small fixed buffer; closes at EOF. */
void cell_read_small(int *fd, char *buf, size_t cap, size_t *len);
/* Parses bwrap's --info-fd report and opens the init's pidfd. */
void cell_parse_info(cell *c);
/* One poll round over every open descriptor: PUMP_TIMED_OUT when the
 * deadline passed with nothing to do. */
pump_result cell_pump(cell *c, long long deadline, cap_error *err);
/* CELL_RESOURCE_LIMIT naming the ceiling the cell hit, or CAP_OK. */
cap_code cell_ceiling_failure(const cell *c, const char *tail, cap_error *err);

#endif
