/* DSSE (Dead Simple Signing Envelope, v1) as in-toto uses it, and the same
 * envelope as a Sigstore bundle (v0.3, DSSE content, public-key
 * verification material): encoding, the pre-authentication encoding (PAE)
 * that is what is signed, and one strict reader for both forms. */
#ifndef DSSE_H
#define DSSE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "cap_error.h"

#define DSSE_PAYLOAD_TYPE "application/vnd.in-toto+json"
#define SIGSTORE_BUNDLE_MEDIA_TYPE "application/vnd.dev.sigstore.bundle.v0.3+json"
/* No envelope or bundle this host reads is larger. */
#define DSSE_MAX_BYTES (4u << 20)

typedef struct signing_key signing_key;

/* "DSSEv1" SP len(type) SP type SP len(body) SP body (lengths in decimal). */
unsigned char *dsse_pae(const char *type, const unsigned char *body, size_t len, size_t *out_len);
/* Standard base64 with padding (RFC 4648 section 4), through OpenSSL. */
char *dsse_base64(const unsigned char *data, size_t len);
/* Only the canonical encoding of some bytes decodes: the alphabet, padding
 * to a multiple of four, no whitespace, and zero unused bits. */
bool dsse_unbase64(const char *text, unsigned char **out, size_t *out_len);

/* The envelope of payload signed by key ({"payload","payloadType",
 * "signatures":[{"keyid","sig"}]}), and the same as a Sigstore bundle. */
cap_code dsse_sign(const unsigned char *payload, size_t len, const signing_key *key, json_t **envelope,
                   cap_error *err);
json_t *dsse_sigstore_bundle(const json_t *envelope, const char *keyid);

typedef struct {
  unsigned char *payload;
  size_t payload_len;
  unsigned char *sig;
  size_t sig_len;
  char keyid[129];
} dsse_parsed;

/* Reads an envelope or a bundle (told apart by "mediaType"): strict JSON
 * (no duplicate key), exactly the known fields, payloadType in-toto
 * (ENVELOPE_PAYLOAD_TYPE otherwise), exactly one signature, canonical
 * base64, at most DSSE_MAX_BYTES; ENVELOPE_INVALID for the rest. */
cap_code dsse_parse(const char *text, size_t len, dsse_parsed *out, cap_error *err);
/* SIGNATURE_INVALID unless the signature is key's over the PAE of the
 * payload (and names key's id when it names one). */
cap_code dsse_verify(const dsse_parsed *p, const signing_key *key, cap_error *err);
void dsse_parsed_free(dsse_parsed *p);

#endif
