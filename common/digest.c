#include "digest.h"

#include <errno.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <string.h>
#include <unistd.h>

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
  if (!EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) || mdlen != 32)
    return false;
  to_hex(md, mdlen, hex);
  return true;
}

bool digest_sha256_fd_hex(int fd, unsigned long long max_bytes, char *hex) {
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  bool ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
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
    ok = total <= max_bytes && EVP_DigestUpdate(ctx, buf, (size_t)n);
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int mdlen = 0;
  ok = ok && EVP_DigestFinal_ex(ctx, md, &mdlen) && mdlen == 32;
  EVP_MD_CTX_free(ctx);
  if (ok) to_hex(md, mdlen, hex);
  return ok;
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
