/* Test-only stand-in for bwrap that reproduces one host failure, chosen by
 * the name it is installed under (the launcher always passes argv[0]
 * "bwrap", so the mode comes from /proc/self/exe):
 *   fake-bwrap-no-ro-bind-fd  real bwrap, but --ro-bind-fd is "unknown"
 *   fake-bwrap-apparmor       Ubuntu 24.04 AppArmor loopback failure
 *   fake-bwrap-uidmap         Ubuntu 24.04 AppArmor uid-map failure
 *   fake-bwrap-sysctl         Debian's unprivileged_userns_clone=0 refusal
 *   fake-bwrap-hang           never starts the sandbox
 *   fake-bwrap-source-gone    real bwrap, except for a cell that mounts a
 *                             workspace file: there it fails as bwrap does
 *                             when a granted file is unlinked between the
 *                             host's open and bwrap's mount
 *   fake-bwrap-exit           exits 1 silently */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return 99;
  self[n] = '\0';
  const char *mode = strrchr(self, '/') + 1;
  if (strcmp(mode, "fake-bwrap-no-ro-bind-fd") == 0) {
    for (int i = 1; i < argc; i++)
      if (strcmp(argv[i], "--ro-bind-fd") == 0) {
        fprintf(stderr, "bwrap: Unknown option --ro-bind-fd\n");
        return 1;
      }
    execv("/usr/bin/bwrap", argv);
    return 98;
  }
  if (strcmp(mode, "fake-bwrap-apparmor") == 0) {
    fprintf(stderr, "bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted\n");
    return 1;
  }
  if (strcmp(mode, "fake-bwrap-uidmap") == 0) {
    fprintf(stderr, "bwrap: setting up uid map: Permission denied\n");
    return 1;
  }
  if (strcmp(mode, "fake-bwrap-sysctl") == 0) {
    fprintf(stderr,
            "bwrap: No permissions to creating new namespace, likely because the kernel "
            "does not allow non-privileged user namespaces. On e.g. debian this can be "
            "enabled with 'sysctl kernel.unprivileged_userns_clone=1'.\n");
    return 1;
  }
  if (strcmp(mode, "fake-bwrap-source-gone") == 0) {
    for (int i = 1; i + 2 < argc; i++)
      if (strcmp(argv[i], "--ro-bind-fd") == 0 && strncmp(argv[i + 2], "/workspace/", 11) == 0) {
        fprintf(stderr, "bwrap: Can't find source path /proc/self/fd/%s: No such file or directory\n",
                argv[i + 1]);
        return 1;
      }
    execv("/usr/bin/bwrap", argv);
    return 98;
  }
  if (strcmp(mode, "fake-bwrap-hang") == 0) {
    for (;;) pause();
  }
  return 1;
}
