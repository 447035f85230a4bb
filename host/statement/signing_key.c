#include "signing_key.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "digest.h"
#include "safe_open.h"

#define KEY_MAX_BYTES 16384

const char *signing_key_algorithm_name(key_algorithm a) {
  return a == KEY_ED25519 ? "ed25519" : "ecdsa-p256";
}

/* Appends an SSH wire string (uint32 length, bytes). */
static size_t put_string(unsigned char *out, const void *data, size_t n) {
  out[0] = (unsigned char)(n >> 24), out[1] = (unsigned char)(n >> 16);
  out[2] = (unsigned char)(n >> 8), out[3] = (unsigned char)n;
  memcpy(out + 4, data, n);
  return 4 + n;
}

/* The key id: OpenSSH's SHA256 fingerprint of the public key ("SHA256:" and
 * the unpadded base64 of the SHA-256 of its SSH wire encoding, RFC 4253 §6.6,
 * RFC 5656 §3.1, RFC 8709 §4), the form `ssh-keygen -l` prints and Go's DSSE
 * verifier (go-securesystemslib, under sigstore-go and cosign) computes for a
 * key it is given: a signature under any other keyid is skipped there. */
static bool ssh_fingerprint(signing_key *key) {
  unsigned char point[65], blob[128], digest[32];
  size_t n = 0, len = 0;
  if (key->algorithm == KEY_ED25519) {
    n = 32;
    if (!EVP_PKEY_get_raw_public_key(key->pkey, point, &n) || n != 32) return false;
    len += put_string(blob + len, "ssh-ed25519", 11);
  } else {
    /* The uncompressed point, whatever form the SPKI carried. */
    if (!EVP_PKEY_set_utf8_string_param(key->pkey, OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT,
                                        "uncompressed") ||
        !EVP_PKEY_get_octet_string_param(key->pkey, OSSL_PKEY_PARAM_PUB_KEY, point, sizeof point, &n) ||
        n != 65)
      return false;
    len += put_string(blob + len, "ecdsa-sha2-nistp256", 19);
    len += put_string(blob + len, "nistp256", 8);
  }
  len += put_string(blob + len, point, n);
  unsigned int dlen = 0;
  char b64[48];
  if (!EVP_Digest(blob, len, digest, &dlen, EVP_sha256(), NULL) || dlen != 32 ||
      EVP_EncodeBlock((unsigned char *)b64, digest, 32) != 44)
    return false;
  b64[43] = '\0'; /* unpadded, as OpenSSH prints it */
  snprintf(key->keyid, sizeof key->keyid, "SHA256:%s", b64);
  return true;
}

/* The key id and the algorithm, from what OpenSSL holds; only the two
 * supported key types pass. */
static cap_code describe(signing_key *key, EVP_PKEY *pkey, bool has_private, cap_error *err) {
  key->pkey = pkey;
  key->has_private = has_private;
  if (EVP_PKEY_get_id(pkey) == EVP_PKEY_ED25519) {
    key->algorithm = KEY_ED25519;
  } else if (EVP_PKEY_get_id(pkey) == EVP_PKEY_EC) {
    char group[64] = "";
    size_t n = 0;
    if (!EVP_PKEY_get_utf8_string_param(pkey, "group", group, sizeof group, &n) ||
        strcmp(group, "prime256v1") != 0)
      return cap_fail(err, CAP_E_KEY_INVALID, "an EC key must be on P-256, not %s", group[0] ? group : "?");
    key->algorithm = KEY_ECDSA_P256;
  } else {
    return cap_fail(err, CAP_E_KEY_INVALID, "the key is neither Ed25519 nor ECDSA P-256");
  }
  unsigned char *der = NULL;
  int len = i2d_PUBKEY(pkey, &der);
  bool ok = len > 0 && digest_sha256_hex(der, (size_t)len, key->der_sha256);
  OPENSSL_free(der);
  ok = ok && ssh_fingerprint(key);
  return ok ? CAP_OK : cap_fail(err, CAP_E_KEY_INVALID, "the public key cannot be encoded");
}

char *signing_key_public_pem(const signing_key *key) {
  BIO *b = BIO_new(BIO_s_mem());
  char *out = NULL;
  if (b && PEM_write_bio_PUBKEY(b, key->pkey)) {
    char *data;
    long n = BIO_get_mem_data(b, &data);
    out = n > 0 ? strndup(data, (size_t)n) : NULL;
  }
  BIO_free(b);
  return out;
}

/* Creates path with mode, failing if it exists; writes text. */
static cap_code write_new(const char *path, mode_t mode, const char *text, cap_error *err) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0)
    return cap_fail(err, CAP_E_KEY_INVALID, "cannot create %s: %s", path,
                    errno == EEXIST ? "it exists (keygen never overwrites a key)" : strerror(errno));
  bool ok = fchmod(fd, mode) == 0 && so_write_all(fd, text, strlen(text));
  close(fd);
  if (!ok) {
    unlink(path);
    return cap_fail(err, CAP_E_KEY_INVALID, "cannot write %s: %s", path, strerror(errno));
  }
  return CAP_OK;
}

/* --out is a file prefix: its last component must be a name, and not a
 * directory's, or the pair would be hidden files inside it (keys/.key) or
 * land beside it (keys.key) where the user meant within. */
static cap_code check_prefix(const char *prefix, cap_error *err) {
  const char *slash = strrchr(prefix, '/'), *last = slash ? slash + 1 : prefix;
  struct stat st;
  if (!*last || strcmp(last, ".") == 0 || strcmp(last, "..") == 0)
    return cap_fail(err, CAP_E_USAGE,
                    "keygen --out %s ends in no file name: pass a prefix such as "
                    "keys/gate, which writes keys/gate.key and keys/gate.pub",
                    prefix);
  if (lstat(prefix, &st) == 0 && S_ISDIR(st.st_mode))
    return cap_fail(err, CAP_E_USAGE,
                    "keygen --out %s is a directory: pass a prefix inside it such "
                    "as %s/gate, which writes %s/gate.key and %s/gate.pub",
                    prefix, prefix, prefix, prefix);
  /* keys/gate with no keys/ yet: the folder is made, private (one level). */
  if (slash && slash != prefix) {
    char parent[4096];
    snprintf(parent, sizeof parent, "%.*s", (int)(slash - prefix), prefix);
    if (mkdir(parent, 0700) != 0 && errno != EEXIST)
      return cap_fail(err, CAP_E_KEY_INVALID, "keygen --out %s: %s cannot be made: %s", prefix, parent,
                      strerror(errno));
  }
  return CAP_OK;
}

cap_code signing_key_generate(const char *prefix, key_algorithm algorithm, json_t **report, cap_error *err) {
  if (check_prefix(prefix, err)) return err->code;
  EVP_PKEY *pkey = algorithm == KEY_ED25519 ? EVP_PKEY_Q_keygen(NULL, NULL, "ED25519")
                                            : EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
  if (!pkey) return cap_fail(err, CAP_E_INTERNAL, "OpenSSL could not generate a key");
  signing_key key = {0};
  cap_code rc = describe(&key, pkey, true, err);
  char priv[4200], pub[4200];
  snprintf(priv, sizeof priv, "%s.key", prefix);
  snprintf(pub, sizeof pub, "%s.pub", prefix);
  BIO *b = rc ? NULL : BIO_new(BIO_s_mem());
  char *pem = NULL, *pub_pem = NULL;
  if (b && PEM_write_bio_PrivateKey(b, pkey, NULL, NULL, 0, NULL, NULL)) {
    char *data;
    long n = BIO_get_mem_data(b, &data);
    pem = strndup(data, (size_t)n);
  }
  if (!rc && !(pub_pem = signing_key_public_pem(&key)))
    rc = cap_fail(err, CAP_E_INTERNAL, "cannot encode the key");
  if (!rc && !pem) rc = cap_fail(err, CAP_E_INTERNAL, "cannot encode the key");
  if (!rc) rc = write_new(priv, 0600, pem, err);
  if (!rc && (rc = write_new(pub, 0644, pub_pem, err))) unlink(priv);
  if (pem) OPENSSL_cleanse(pem, strlen(pem));
  free(pem);
  free(pub_pem);
  BIO_free_all(b);
  if (!rc)
    *report = json_pack("{s:s,s:s,s:s,s:s}", "privateKey", priv, "publicKey", pub, "algorithm",
                        signing_key_algorithm_name(key.algorithm), "keyid", key.keyid);
  signing_key_free(&key);
  return rc;
}

/* Reads a key file (bounded, no symlink); a private one must be 0600 or
 * stricter. */
static cap_code read_key_file(const char *path, bool private_key, char **text, cap_error *err) {
  struct stat st;
  int fd = so_open_regular(AT_FDCWD, path, &st);
  if (fd < 0)
    return cap_fail(err, CAP_E_KEY_INVALID, "key %s: %s", path,
                    fd == SO_NOT_REGULAR ? "not a regular file" : so_open_errno_text(errno));
  size_t len;
  so_read_result r = so_read_bounded(fd, KEY_MAX_BYTES, text, &len);
  close(fd);
  if (r != SO_READ_OK)
    return cap_fail(err, CAP_E_KEY_INVALID, "key %s cannot be read (at most %d bytes)", path, KEY_MAX_BYTES);
  /* The common mix-up first: the other half of the pair, named as it is. */
  bool holds_private = strstr(*text, "PRIVATE KEY-----") != NULL;
  bool holds_public = !holds_private && strstr(*text, "-----BEGIN PUBLIC KEY-----") != NULL;
  cap_code rc = CAP_OK;
  if (!private_key && holds_private)
    rc = cap_fail(err, CAP_E_KEY_INVALID,
                  "%s holds a private key; verify takes the public key: pass the "
                  ".pub beside it (keygen --out PREFIX wrote PREFIX.pub)",
                  path);
  else if (private_key && holds_public)
    rc = cap_fail(err, CAP_E_KEY_INVALID,
                  "%s holds a public key; --key signs, so it takes the private key: "
                  "pass the .key beside it (keygen --out PREFIX wrote PREFIX.key, 0600)",
                  path);
  else if (private_key && (st.st_mode & 077))
    rc = cap_fail(err, CAP_E_KEY_INVALID, "private key %s is readable by others (mode %o): chmod 600 it",
                  path, (unsigned)(st.st_mode & 0777));
  if (rc) {
    OPENSSL_cleanse(*text, strlen(*text)); /* a private key read by mistake is not kept */
    free(*text);
    *text = NULL;
  }
  return rc;
}

/* OpenSSL's default for an encrypted key is to prompt on the controlling
 * terminal, with no deadline: a host never does. Asked for a passphrase,
 * this notes that the key is encrypted and gives none. */
static int refuse_passphrase(char *buf, int size, int rwflag, void *asked) {
  (void)buf, (void)size, (void)rwflag;
  *(bool *)asked = true;
  return -1;
}

static EVP_PKEY *pem_key(const char *text, bool private_key, bool *encrypted) {
  BIO *b = BIO_new_mem_buf(text, -1);
  *encrypted = false;
  EVP_PKEY *k = !b            ? NULL
                : private_key ? PEM_read_bio_PrivateKey(b, NULL, refuse_passphrase, encrypted)
                              : PEM_read_bio_PUBKEY(b, NULL, refuse_passphrase, encrypted);
  BIO_free(b);
  return k;
}

/* The key read from source (NULL: it held none) becomes key, or is freed. */
static cap_code adopt(signing_key *key, EVP_PKEY *pkey, bool encrypted, bool has_private, const char *source,
                      cap_error *err) {
  if (encrypted) {
    EVP_PKEY_free(pkey);
    return cap_fail(err, CAP_E_KEY_INVALID,
                    "%s is encrypted: capsule-host never asks for a passphrase "
                    "(a prompt would block a gate, or sign with whatever was typed ahead); keep the key "
                    "in a secret store and give it unencrypted, 0600 (openssl pkey -in K -out K.plain)",
                    source);
  }
  if (!pkey)
    return cap_fail(err, CAP_E_KEY_INVALID, "%s holds no PEM %s key", source,
                    has_private ? "private" : "public");
  if (describe(key, pkey, has_private, err)) {
    signing_key_free(key);
    return err->code;
  }
  return CAP_OK;
}

cap_code signing_key_load_private(const char *path, signing_key *key, bool *found, cap_error *err) {
  memset(key, 0, sizeof *key);
  *found = false;
  char *text = NULL;
  const char *env = getenv(ATTEST_KEY_ENV);
  if (path) {
    if (read_key_file(path, true, &text, err)) return err->code;
  } else if (env && env[0]) {
    if (strlen(env) > KEY_MAX_BYTES)
      return cap_fail(err, CAP_E_KEY_INVALID, "%s is too long", ATTEST_KEY_ENV);
    text = strdup(env);
  } else {
    return CAP_OK;
  }
  *found = true;
  bool encrypted = false;
  EVP_PKEY *pkey = text ? pem_key(text, true, &encrypted) : NULL;
  if (text) OPENSSL_cleanse(text, strlen(text));
  free(text);
  return adopt(key, pkey, encrypted, true, path ? path : ATTEST_KEY_ENV, err);
}

cap_code signing_key_from_public_pem(const char *pem, signing_key *key, cap_error *err) {
  memset(key, 0, sizeof *key);
  bool encrypted = false;
  EVP_PKEY *pkey = pem_key(pem, false, &encrypted);
  return adopt(key, pkey, encrypted, false, "the PEM text", err);
}

cap_code signing_key_load_public(const char *path, signing_key *key, cap_error *err) {
  memset(key, 0, sizeof *key);
  char *text = NULL;
  if (read_key_file(path, false, &text, err)) return err->code;
  bool encrypted = false;
  EVP_PKEY *pkey = pem_key(text, false, &encrypted);
  free(text);
  return adopt(key, pkey, encrypted, false, path, err);
}

cap_code signing_key_sign(const signing_key *key, const unsigned char *msg, size_t len, unsigned char **sig,
                          size_t *sig_len, cap_error *err) {
  *sig = NULL;
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  const EVP_MD *md = key->algorithm == KEY_ED25519 ? NULL : EVP_sha256();
  size_t n = 0;
  bool ok = ctx && key->has_private && EVP_DigestSignInit(ctx, NULL, md, NULL, key->pkey) == 1 &&
            EVP_DigestSign(ctx, NULL, &n, msg, len) == 1 && (*sig = malloc(n)) &&
            EVP_DigestSign(ctx, *sig, &n, msg, len) == 1;
  EVP_MD_CTX_free(ctx);
  if (!ok) {
    free(*sig);
    *sig = NULL;
    return cap_fail(err, CAP_E_KEY_INVALID, "OpenSSL could not sign with the %s key",
                    signing_key_algorithm_name(key->algorithm));
  }
  *sig_len = n;
  return CAP_OK;
}

bool signing_key_verify(const signing_key *key, const unsigned char *msg, size_t len,
                        const unsigned char *sig, size_t sig_len) {
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  const EVP_MD *md = key->algorithm == KEY_ED25519 ? NULL : EVP_sha256();
  bool ok = ctx && EVP_DigestVerifyInit(ctx, NULL, md, NULL, key->pkey) == 1 &&
            EVP_DigestVerify(ctx, sig, sig_len, msg, len) == 1;
  EVP_MD_CTX_free(ctx);
  return ok;
}

void signing_key_free(signing_key *key) {
  EVP_PKEY_free(key->pkey);
  key->pkey = NULL;
}
