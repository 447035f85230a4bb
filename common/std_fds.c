#include "std_fds.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

bool std_fds_ensure_open(void) {
  for (int fd = 0; fd <= 2; fd++) {
    if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
    /* The lowest free number is fd itself: those below it are open. */
    int got = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (got != fd) {
      if (got >= 0) close(got);
      return false;
    }
  }
  return true;
}
