#include "ceilings.h"

#include <errno.h>
#include <string.h>
#include <sys/resource.h>

/* Lowers both limits; a hard limit already below the ceiling stays (it is
 * stricter), and raising is never attempted. */
static cap_code lower(int resource, const char *name, rlim_t soft, rlim_t hard, cap_error *err) {
  struct rlimit cur;
  if (getrlimit(resource, &cur) != 0)
    return cap_fail(err, CAP_E_LAUNCH_FAILED, "getrlimit(%s): %s", name, strerror(errno));
  if (cur.rlim_max != RLIM_INFINITY && cur.rlim_max < hard) hard = cur.rlim_max;
  if (soft > hard) soft = hard;
  struct rlimit want = {soft, hard};
  if (setrlimit(resource, &want) != 0)
    return cap_fail(err, CAP_E_LAUNCH_FAILED, "setrlimit(%s): %s", name, strerror(errno));
  return CAP_OK;
}

cap_code ceilings_apply(const ld_ceilings *c, int highest_fd, cap_error *err) {
  if ((long long)highest_fd + CEILINGS_BWRAP_FD_MARGIN >= c->open_files)
    return cap_fail(err, CAP_E_LAUNCH_DOC_INVALID,
                    "ceilings.openFiles %lld leaves bwrap no descriptors (highest fd %d)", c->open_files,
                    highest_fd);
  rlim_t mem = (rlim_t)c->memory_bytes, cpu = (rlim_t)c->cpu_seconds;
  rlim_t fsize = (rlim_t)c->file_bytes, nofile = (rlim_t)c->open_files;
  cap_code rc = lower(RLIMIT_DATA, "RLIMIT_DATA", mem, mem, err);
  /* SIGXCPU at the soft limit names the cause; SIGKILL a second later
   * ends a guest that handles SIGXCPU. */
  if (!rc) rc = lower(RLIMIT_CPU, "RLIMIT_CPU", cpu, cpu + 1, err);
  if (!rc) rc = lower(RLIMIT_FSIZE, "RLIMIT_FSIZE", fsize, fsize, err);
  if (!rc) rc = lower(RLIMIT_NOFILE, "RLIMIT_NOFILE", nofile, nofile, err);
  /* No core files: an aborting guest must not write its memory anywhere. */
  if (!rc) rc = lower(RLIMIT_CORE, "RLIMIT_CORE", 0, 0, err);
  return rc;
}
