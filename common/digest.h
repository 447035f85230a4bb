/* SHA-256 and randomness, both from OpenSSL. */
#ifndef DIGEST_H
#define DIGEST_H

#include <stdbool.h>
#include <stddef.h>

#define SHA256_HEX_LEN 64

/* hex must hold SHA256_HEX_LEN + 1 bytes; lowercase output. */
bool digest_sha256_hex(const void *data, size_t len, char *hex);
/* SHA-256 of everything readable from fd, read in 64 KiB steps (no copy of
 * the whole file); false on a read error or past max_bytes. */
bool digest_sha256_fd_hex(int fd, unsigned long long max_bytes, char *hex);
/* SHA-256 of the regular file at path (relative to the current directory),
 * opened without following a link at any step (so_open_regular); false
 * when it is not one, cannot be read, or is past max_bytes. */
bool digest_sha256_path_hex(const char *path, unsigned long long max_bytes, char *hex);
/* SHA-256 over bytes given in pieces, for a reader that hashes exactly the
 * bytes it consumes. begin: NULL when out of memory; end frees, also on
 * failure, and takes NULL (false). */
typedef struct digest_stream digest_stream;
digest_stream *digest_stream_begin(void);
bool digest_stream_update(digest_stream *d, const void *data, size_t len);
bool digest_stream_end(digest_stream *d, char *hex);
/* Frees a stream whose digest is not wanted (NULL is fine). */
void digest_stream_abandon(digest_stream *d);
/* Fills hex with 2*nbytes lowercase hex digits of fresh randomness. */
bool digest_random_hex(size_t nbytes, char *hex);
/* True for exactly 64 lowercase hex digits. */
bool digest_is_sha256_hex(const char *s);

#endif
