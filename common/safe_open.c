#include "safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

int so_open(int dirfd, const char *path, int flags) {
  struct open_how how;
  memset(&how, 0, sizeof how);
  how.flags = (unsigned long long)(flags | O_CLOEXEC);
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  if (dirfd != AT_FDCWD) how.resolve |= RESOLVE_BENEATH;
  long fd;
  do {
    fd = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
  } while (fd < 0 && (errno == EINTR || errno == EAGAIN));
  return (int)fd;
}

int so_open_regular(int dirfd, const char *path, struct stat *st) {
  int pfd = so_open(dirfd, path, O_PATH);
  if (pfd < 0) return SO_OPEN_FAILED;
  if (fstat(pfd, st) != 0) {
    int e = errno;
    close(pfd);
    errno = e;
    return SO_OPEN_FAILED; /* *st says nothing: never read it */
  }
  if (!S_ISREG(st->st_mode)) {
    close(pfd);
    return SO_NOT_REGULAR;
  }
  char proc[64];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", pfd);
  int fd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  int e = errno;
  close(pfd);
  errno = e;
  return fd;
}

so_read_result so_read_bounded(int fd, size_t max, char **out, size_t *out_len) {
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap + 1);
  if (!buf) return SO_READ_FAILED;
  for (;;) {
    if (len == cap) {
      if (cap > max) break;
      cap *= 2;
      char *p = realloc(buf, cap + 1);
      if (!p) {
        free(buf);
        return SO_READ_FAILED;
      }
      buf = p;
    }
    ssize_t n = read(fd, buf + len, cap - len);
    if (n < 0) {
      if (errno == EINTR) continue;
      free(buf);
      return SO_READ_FAILED;
    }
    if (n == 0) break;
    len += (size_t)n;
    if (len > max) break;
  }
  if (len > max) {
    free(buf);
    return SO_READ_TOO_LARGE;
  }
  buf[len] = '\0';
  *out = buf;
  *out_len = len;
  return SO_READ_OK;
}

bool so_write_all(int fd, const void *buf, size_t len) {
  const char *p = buf;
  while (len) {
    ssize_t n = write(fd, p, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    len -= (size_t)n;
  }
  return true;
}

static bool plain_components(const char *p) {
  size_t comp = 0;
  const char *start = p;
  for (;; p++) {
    /* Control bytes have no business in a mount path or an argv entry. */
    if ((unsigned char)*p < 0x20 && *p != '\0') return false;
    if (*p == 0x7f) return false;
    if (*p == '/' || *p == '\0') {
      size_t n = (size_t)(p - start);
      if (n == 0 || n > 255) return false;
      if ((n == 1 && start[0] == '.') || (n == 2 && start[0] == '.' && start[1] == '.')) return false;
      comp++;
      if (*p == '\0') break;
      start = p + 1;
    }
  }
  return comp > 0;
}

bool so_is_plain_relative(const char *path) {
  size_t n = strlen(path);
  if (n == 0 || n > 4096 || path[0] == '/') return false;
  return plain_components(path);
}

bool so_is_plain_absolute(const char *path) {
  size_t n = strlen(path);
  if (n < 2 || n > 4096 || path[0] != '/') return false;
  return plain_components(path + 1);
}

void so_close_from(int lowfd) {
#ifdef SYS_close_range
  if (syscall(SYS_close_range, (unsigned)lowfd, ~0U, 0) == 0) return;
#endif
  struct rlimit rl;
  long maxfd = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? (long)rl.rlim_cur : 65536;
  for (long fd = lowfd; fd < maxfd; fd++) close((int)fd);
}

const char *so_file_type_text(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a UNIX socket";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISLNK(m)) return "a symlink";
  return "not a regular file";
}

const char *so_open_errno_text(int e) {
  switch (e) {
    case ELOOP: return "traverses a symbolic link";
    case EXDEV: return "escapes its root";
    case ENOENT: return "does not exist";
    case ENOTDIR: return "has a non-directory parent";
    default: return strerror(e);
  }
}
