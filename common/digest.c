#include "digest.h"

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <string.h>

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
