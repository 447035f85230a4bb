/* capsule-launcher: verifies every mount source by descriptor and execs
 * bwrap with descriptor mounts only, an empty environment and no inherited
 * descriptors but the protocol pipes. See common/launch_contract.h for the contract. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cap_error.h"
#include "ceilings.h"
#include "launch_contract.h"
#include "launch_prepare.h"
#include "safe_open.h"

#define LAUNCHER_EXIT_FAILURE 127

static void report_and_exit(const cap_error *err) {
  json_t *o = json_pack("{s:s,s:s}", "code", cap_code_name(err->code), "message", err->message);
  char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
  if (text) {
    so_write_all(LAUNCHER_STATUS_FD, text, strlen(text));
    free(text);
  }
  json_decref(o);
  _exit(LAUNCHER_EXIT_FAILURE);
}

static void keep_across_exec(int fd) {
  fcntl(fd, F_SETFD, 0);
}

int main(void) {
  cap_error err = {0};
  /* Whatever the caller left open beyond the contract must not reach bwrap,
   * which passes every inherited descriptor on to the cell. */
  so_close_from(LAUNCHER_FIRST_FREE_FD);
  /* Status pipe closes itself on a successful exec. */
  if (fcntl(LAUNCHER_STATUS_FD, F_SETFD, FD_CLOEXEC) != 0) _exit(LAUNCHER_EXIT_FAILURE);
  launch_plan plan;
  cap_code rc = launch_prepare(LAUNCHER_DOC_FD, LAUNCH_DOC_MAX_BYTES, &plan, &err);
  close(LAUNCHER_DOC_FD);
  if (rc != CAP_OK) report_and_exit(&err);
  if (ceilings_apply(&plan.doc.ceilings, plan.highest_fd, &err) != CAP_OK) report_and_exit(&err);
  keep_across_exec(plan.seccomp_fd);
  for (size_t i = 0; i < plan.mount_fd_count; i++) keep_across_exec(plan.mount_fds[i]);

  /* bwrap's own PID 1 keeps bwrap's environment: give it none. */
  char *const empty_env[] = {NULL};
  syscall(SYS_execveat, plan.bwrap_fd, "", plan.argv.items, empty_env, AT_EMPTY_PATH);
  cap_fail(&err, CAP_E_LAUNCH_FAILED, "cannot exec bwrap: %s%s", strerror(errno),
           errno == ENOENT ? " (bubblewrapCommand must be an ELF executable, not a script)" : "");
  report_and_exit(&err);
}
