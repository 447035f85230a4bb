/* Cells whose bwrap ended before it handed its sandbox over. */
#ifndef CELL_ORPHANS_H
#define CELL_ORPHANS_H

/* How long a SIGKILLed cell init (or orphan) may take to go. */
#define CELL_JOIN_HARD_LIMIT_MS 10000

/* Makes this process the reaper of its cells' orphans. Idempotent. */
void cell_orphans_adopt(void);
/* SIGKILLs and reaps every child of this process that is the init of a
 * nested PID namespace: only an orphaned cell is one. Each is waited for at
 * most wait_ms after its SIGKILL; returns how many were ended. */
int cell_orphans_end(long long wait_ms);

#endif
