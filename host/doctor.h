/* capsule-host doctor: the README preflight on any machine, each failure
 * explained with the fix. */
#ifndef DOCTOR_H
#define DOCTOR_H

/* Pointers only: declared, not included (C11 allows the repeat). */
typedef struct host host;

/* Prints {"ok":..., "checks":[{check, ok, code?, detail, fix?}]}; returns
 * the exit status (0 when every check passed). */
int doctor_run(host *h);

#endif
