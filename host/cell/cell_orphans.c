/* Orphaned cells. bwrap's sandbox side blocks on an eventfd right after
 * clone until its parent says go, with no parent-death signal armed yet
 * (bwrap 0.8.0 to 0.11.1). A bwrap ended in that window, before --info-fd
 * named the sandbox's init, left that init blocked for ever where nobody
 * knew its pid. The process that starts cells is therefore a subreaper:
 * such an init is reparented to it, and is the only kind of child of ours
 * that is the init of a nested PID namespace (we fork launchers, which
 * become bwrap itself). Killing that init ends the whole namespace. */
#include "cell_orphans.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

void cell_orphans_adopt(void) {
  prctl(PR_SET_CHILD_SUBREAPER, 1);
}

/* "NSpid:\t4036\t1": a pid in more than one namespace, 1 in the innermost. */
static bool is_nested_namespace_init(pid_t pid) {
  char path[64], buf[4096];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE *f = fopen(path, "re");
  if (!f) return false;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char *line = strstr(buf, "\nNSpid:");
  if (!line) return false;
  line += strlen("\nNSpid:");
  int levels = 0;
  long last = 0;
  for (char *end;; line = end) {
    long v = strtol(line, &end, 10);
    if (end == line) break;
    levels++;
    last = v;
  }
  return levels >= 2 && last == 1;
}

static void end_orphan(pid_t pid, long long wait_ms) {
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (pidfd < 0) return;
  syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
  struct pollfd p = {pidfd, POLLIN, 0};
  int r;
  while ((r = poll(&p, 1, wait_ms > 0 ? (int)wait_ms : 0)) < 0 && errno == EINTR) {
  }
  close(pidfd);
  /* Our child, so its pid stays ours until this wait: no reuse race. */
  waitpid(pid, NULL, r > 0 ? 0 : WNOHANG);
}

static int end_children_of_task(const char *tid, long long wait_ms) {
  char path[96], buf[4096];
  snprintf(path, sizeof path, "/proc/self/task/%s/children", tid);
  FILE *f = fopen(path, "re");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  int ended = 0;
  for (char *p = buf, *end;; p = end) {
    long pid = strtol(p, &end, 10);
    if (end == p) break;
    if (pid > 0 && is_nested_namespace_init((pid_t)pid)) {
      end_orphan((pid_t)pid, wait_ms);
      ended++;
    }
  }
  return ended;
}

int cell_orphans_end(long long wait_ms) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return 0;
  int ended = 0;
  for (struct dirent *e; (e = readdir(d));)
    if (e->d_name[0] >= '1' && e->d_name[0] <= '9') ended += end_children_of_task(e->d_name, wait_ms);
  closedir(d);
  return ended;
}
