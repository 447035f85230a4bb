/* Opening without following symbolic links, and bounded reads. Every file
 * the host or launcher trusts is reached through these helpers. */
#ifndef SAFE_OPEN_H
#define SAFE_OPEN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* openat2 with RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS, plus
 * RESOLVE_BENEATH when dirfd is not AT_FDCWD. O_CLOEXEC is always added.
 * Returns fd or -1 with errno. */
int so_open(int dirfd, const char *path, int flags);

/* Functions that return a descriptor return it (>= 0) or one of these. */
enum {
  SO_OPEN_FAILED = -1, /* errno says why */
  SO_NOT_REGULAR = -2  /* *st says what it is */
};

/* Opens dirfd/path as so_open(O_PATH), checks S_ISREG on that descriptor
 * (never before opening: a FIFO or device is never opened for reading), then
 * reopens the same inode read-only through /proc/self/fd. Returns the fd,
 * SO_OPEN_FAILED or SO_NOT_REGULAR. */
int so_open_regular(int dirfd, const char *path, struct stat *st);

typedef enum { SO_READ_OK, SO_READ_FAILED /* errno */, SO_READ_TOO_LARGE } so_read_result;

/* Reads the whole of fd into a malloc'd buffer (NUL terminated for
 * convenience); more than max bytes is SO_READ_TOO_LARGE. */
so_read_result so_read_bounded(int fd, size_t max, char **out, size_t *out_len);

/* write(2) until done, retrying EINTR. */
bool so_write_all(int fd, const void *buf, size_t len);

/* A relative path made of plain components: no "", ".", "..", no leading or
 * trailing "/", no NUL, at most 4096 bytes and 255 per component. */
bool so_is_plain_relative(const char *path);

/* Lexically normalised absolute path (no "." or ".." or "//"). */
bool so_is_plain_absolute(const char *path);

/* Words for error messages: what a non-regular file is ("a directory",
 * "a FIFO", ...) and why an so_open failed ("traverses a symbolic link"
 * for ELOOP, "escapes its root" for EXDEV, ...). */
const char *so_file_type_text(mode_t mode);
const char *so_open_errno_text(int e);

/* Closes every descriptor >= lowfd (close_range, with a fallback loop). */
void so_close_from(int lowfd);

#endif
