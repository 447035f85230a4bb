/* The attestation key: an Ed25519 or ECDSA P-256 key pair held by OpenSSL
 * (EVP), written by `capsule-host keygen` (private key 0600, PKCS#8 PEM;
 * public key SPKI PEM), read from a file or from an environment variable
 * (a CI secret), and used to sign and check DSSE envelopes. Its id is
 * OpenSSH's SHA256 fingerprint of the public key ("SHA256:<base64>", as
 * `ssh-keygen -l` prints it and Go's DSSE verifier matches it). */
#ifndef SIGNING_KEY_H
#define SIGNING_KEY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "cap_error.h"

#define ATTEST_KEY_ENV "CAPSULE_ATTEST_KEY"

typedef enum { KEY_ED25519, KEY_ECDSA_P256 } key_algorithm;

typedef struct signing_key {
  void *pkey; /* EVP_PKEY */
  key_algorithm algorithm;
  bool has_private;
  char keyid[65];      /* "SHA256:" and 43 base64 characters */
  char der_sha256[65]; /* the id statements before 2026-12 carried: hex SHA-256 of the SPKI DER */
} signing_key;

/* Writes prefix.key (0600, created, never overwritten) and prefix.pub;
 * *report names them, the algorithm and the key id. KEY_INVALID when a
 * file exists or cannot be written. */
cap_code signing_key_generate(const char *prefix, key_algorithm algorithm, json_t **report, cap_error *err);
/* A private key from path, or (path NULL) from the PEM text in the
 * environment variable ATTEST_KEY_ENV. A key file readable by group or
 * others is refused, as ssh refuses one. *found false (CAP_OK) when
 * neither is given. */
cap_code signing_key_load_private(const char *path, signing_key *key, bool *found, cap_error *err);
/* A public key (SPKI PEM) from path, or from PEM text. */
cap_code signing_key_load_public(const char *path, signing_key *key, cap_error *err);
cap_code signing_key_from_public_pem(const char *pem, signing_key *key, cap_error *err);
/* Ed25519 signs msg itself; ECDSA P-256 signs its SHA-256 (DER signature). */
cap_code signing_key_sign(const signing_key *key, const unsigned char *msg, size_t len, unsigned char **sig,
                          size_t *sig_len, cap_error *err);
bool signing_key_verify(const signing_key *key, const unsigned char *msg, size_t len,
                        const unsigned char *sig, size_t sig_len);
/* The public key as SPKI PEM (malloc'd). */
char *signing_key_public_pem(const signing_key *key);
const char *signing_key_algorithm_name(key_algorithm algorithm);
void signing_key_free(signing_key *key);

#endif
