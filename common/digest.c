#include "digest.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <string.h>
#include <unistd.h>

#include "safe_open.h"

static void to_hex(const unsigned char *in, size_t n, char *hex) {
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    hex[2 * i] = digits[in[i] >> 4];
    hex[2 * i + 1] = digits[in[i] & 15];
  }
  hex[2 * n] = '\0';
}

bool digest_sha256_hex(const void *data, size_t len, char *hex) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int mdlen = 0;
  if (!EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) || mdlen != 32) return false;
  to_hex(md, mdlen, hex);
  return true;
}

bool digest_sha256_path_hex(const char *path, unsigned long long max_bytes, char *hex) {
  struct stat st;
  int fd = so_open_regular(AT_FDCWD, path, &st);
  bool ok = fd >= 0 && digest_sha256_fd_hex(fd, max_bytes, hex);
  if (fd >= 0) close(fd);
  return ok;
}

/* The stream is OpenSSL's context itself, behind a name of our own. */
digest_stream *digest_stream_begin(void) {
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  if (ctx && !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
    EVP_MD_CTX_free(ctx);
    ctx = NULL;
  }
  return (digest_stream *)ctx;
}

bool digest_stream_update(digest_stream *d, const void *data, size_t len) {
  return d && EVP_DigestUpdate((EVP_MD_CTX *)d, data, len);
}

bool digest_stream_end(digest_stream *d, char *hex) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int mdlen = 0;
  bool ok = d && EVP_DigestFinal_ex((EVP_MD_CTX *)d, md, &mdlen) && mdlen == 32;
  EVP_MD_CTX_free((EVP_MD_CTX *)d);
  if (ok) to_hex(md, mdlen, hex);
  return ok;
}

void digest_stream_abandon(digest_stream *d) {
  EVP_MD_CTX_free((EVP_MD_CTX *)d);
}

bool digest_sha256_fd_hex(int fd, unsigned long long max_bytes, char *hex) {
  digest_stream *d = digest_stream_begin();
  bool ok = d != NULL;
  unsigned long long total = 0;
  unsigned char buf[65536];
  while (ok) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = n == 0;
      break;
    }
    total += (unsigned long long)n;
    ok = total <= max_bytes && digest_stream_update(d, buf, (size_t)n);
  }
  if (!ok) {
    digest_stream_abandon(d);
    return false;
  }
  return digest_stream_end(d, hex);
}

bool digest_random_hex(size_t nbytes, char *hex) {
  unsigned char buf[64];
  if (nbytes > sizeof buf || RAND_bytes(buf, (int)nbytes) != 1) return false;
  to_hex(buf, nbytes, hex);
  return true;
}

bool digest_is_sha256_hex(const char *s) {
  if (strlen(s) != SHA256_HEX_LEN) return false;
  for (; *s; s++)
    if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f'))) return false;
  return true;
}
