#include "dsse.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "signing_key.h"
#include "strict_json.h"

unsigned char *dsse_pae(const char *type, const unsigned char *body, size_t len, size_t *out_len) {
  size_t tlen = strlen(type);
  char head[128];
  int h = snprintf(head, sizeof head, "DSSEv1 %zu ", tlen);
  char mid[64];
  int m = snprintf(mid, sizeof mid, " %zu ", len);
  size_t total = (size_t)h + tlen + (size_t)m + len;
  unsigned char *out = malloc(total ? total : 1);
  if (!out) return NULL;
  memcpy(out, head, (size_t)h);
  memcpy(out + h, type, tlen);
  memcpy(out + h + tlen, mid, (size_t)m);
  if (len) memcpy(out + h + tlen + m, body, len);
  *out_len = total;
  return out;
}

char *dsse_base64(const unsigned char *data, size_t len) {
  if (len > (size_t)1 << 30) return NULL;
  char *out = malloc(4 * ((len + 2) / 3) + 1);
  if (out) EVP_EncodeBlock((unsigned char *)out, data, (int)len);
  return out;
}

bool dsse_unbase64(const char *text, unsigned char **out, size_t *out_len) {
  *out = NULL;
  size_t n = strlen(text);
  if (n % 4 != 0 || n > DSSE_MAX_BYTES) return false;
  size_t pad = 0;
  for (size_t i = 0; i < n; i++) {
    char c = text[i];
    bool alpha =
        (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
    if (c == '=' && i >= n - 2)
      pad++;
    else if (!alpha || pad)
      return false; /* nothing after padding */
  }
  unsigned char *buf = malloc(n / 4 * 3 + 1);
  if (!buf) return false;
  int got = n ? EVP_DecodeBlock(buf, (const unsigned char *)text, (int)n) : 0;
  if (got < 0 || (size_t)got < pad) {
    free(buf);
    return false;
  }
  size_t len = (size_t)got - pad; /* EVP_DecodeBlock counts padding as zero bytes */
  /* Canonical: encoding the bytes gives the text back (no stray low bits). */
  char *again = dsse_base64(buf, len);
  bool canonical = again && strcmp(again, text) == 0;
  free(again);
  if (!canonical) {
    free(buf);
    return false;
  }
  *out = buf;
  *out_len = len;
  return true;
}

cap_code dsse_sign(const unsigned char *payload, size_t len, const signing_key *key, json_t **envelope,
                   cap_error *err) {
  *envelope = NULL;
  size_t pae_len;
  unsigned char *pae = dsse_pae(DSSE_PAYLOAD_TYPE, payload, len, &pae_len), *sig = NULL;
  size_t sig_len = 0;
  if (!pae) return cap_fail(err, CAP_E_INTERNAL, "out of memory");
  cap_code rc = signing_key_sign(key, pae, pae_len, &sig, &sig_len, err);
  free(pae);
  if (rc) return rc;
  char *b64_payload = dsse_base64(payload, len), *b64_sig = dsse_base64(sig, sig_len);
  free(sig);
  if (b64_payload && b64_sig)
    *envelope = json_pack("{s:s,s:s,s:[{s:s,s:s}]}", "payload", b64_payload, "payloadType", DSSE_PAYLOAD_TYPE,
                          "signatures", "keyid", key->keyid, "sig", b64_sig);
  free(b64_payload);
  free(b64_sig);
  return *envelope ? CAP_OK : cap_fail(err, CAP_E_INTERNAL, "out of memory");
}

json_t *dsse_sigstore_bundle(const json_t *envelope, const char *keyid) {
  return json_pack("{s:s,s:{s:{s:s},s:[],s:{s:[]}},s:O}", "mediaType", SIGSTORE_BUNDLE_MEDIA_TYPE,
                   "verificationMaterial", "publicKey", "hint", keyid, "tlogEntries",
                   "timestampVerificationData", "rfc3161Timestamps", "dsseEnvelope", envelope);
}

static cap_code invalid(cap_error *err, const char *why) {
  return cap_fail(err, CAP_E_ENVELOPE_INVALID, "%s", why);
}

/* The envelope object, in either form. */
static cap_code read_envelope(const json_t *e, dsse_parsed *out, cap_error *err) {
  static const char *const keys[] = {"payload", "payloadType", "signatures", NULL};
  static const char *const sig_keys[] = {"keyid", "sig", NULL};
  static const char *const sig_required[] = {"sig", NULL};
  if (!sj_keys(e, keys, keys, CAP_E_ENVELOPE_INVALID, "DSSE envelope", err)) return err->code;
  const char *type, *payload, *sig, *keyid = "";
  if (!sj_string(e, "payloadType", &type, CAP_E_ENVELOPE_INVALID, "DSSE envelope", err) ||
      !sj_string(e, "payload", &payload, CAP_E_ENVELOPE_INVALID, "DSSE envelope", err))
    return err->code;
  if (strcmp(type, DSSE_PAYLOAD_TYPE) != 0)
    return cap_fail(err, CAP_E_ENVELOPE_PAYLOAD_TYPE, "payloadType is \"%.100s\", not \"%s\"", type,
                    DSSE_PAYLOAD_TYPE);
  const json_t *sigs = json_object_get(e, "signatures");
  /* One signer, one signature: a list of several (re-ordered, repeated)
   * is not read as "any of them". */
  if (!json_is_array(sigs) || json_array_size(sigs) != 1)
    return invalid(err, "an envelope carries exactly one signature");
  const json_t *s = json_array_get(sigs, 0);
  if (!sj_keys(s, sig_keys, sig_required, CAP_E_ENVELOPE_INVALID, "signature", err) ||
      !sj_string(s, "sig", &sig, CAP_E_ENVELOPE_INVALID, "signature", err) ||
      !sj_opt_string(s, "keyid", &keyid, CAP_E_ENVELOPE_INVALID, "signature", err))
    return err->code;
  if (strlen(keyid) >= sizeof out->keyid) return invalid(err, "the signature's keyid is too long");
  snprintf(out->keyid, sizeof out->keyid, "%s", keyid);
  if (!dsse_unbase64(payload, &out->payload, &out->payload_len))
    return invalid(err, "payload is not canonical base64");
  if (!dsse_unbase64(sig, &out->sig, &out->sig_len) || out->sig_len == 0)
    return invalid(err, "sig is not canonical base64");
  return CAP_OK;
}

/* A list of claims that carries none. */
static bool absent_or_empty(const json_t *list) {
  return !list || (json_is_array(list) && json_array_size(list) == 0);
}

/* What a bundle carries besides the envelope is either checked or refused:
 * this host checks a signature with the key it is given, so it reads a
 * key hint and nothing else. A transparency-log entry or a timestamp would
 * be a claim (logged, or signed at that time) that nothing here checks:
 * refused, never accepted unread. */
static cap_code read_material(const json_t *vm, const char **hint, cap_error *err) {
  static const char *const vm_keys[] = {"publicKey", "tlogEntries", "timestampVerificationData", NULL};
  static const char *const vm_required[] = {"publicKey", NULL};
  static const char *const pk_keys[] = {"hint", NULL};
  static const char *const ts_keys[] = {"rfc3161Timestamps", NULL};
  const json_t *pk = json_object_get(vm, "publicKey");
  if (!sj_keys(vm, vm_keys, vm_required, CAP_E_ENVELOPE_INVALID, "verificationMaterial", err) ||
      !sj_keys(pk, pk_keys, NULL, CAP_E_ENVELOPE_INVALID, "verificationMaterial.publicKey", err))
    return err->code;
  /* proto3's JSON form omits an empty string: Sigstore's own encoders write
   * a key with no hint as "publicKey": {}. No hint, as an empty DSSE keyid,
   * names no key; the signature is what is checked. */
  *hint = "";
  if (json_object_get(pk, "hint") &&
      !sj_string(pk, "hint", hint, CAP_E_ENVELOPE_INVALID, "verificationMaterial.publicKey", err))
    return err->code;
  if (!absent_or_empty(json_object_get(vm, "tlogEntries")))
    return invalid(err,
                   "the bundle carries transparency-log entries, which this host does not check "
                   "(it verifies with a key only): refused, not accepted unread");
  const json_t *ts = json_object_get(vm, "timestampVerificationData");
  if (ts && !sj_keys(ts, ts_keys, NULL, CAP_E_ENVELOPE_INVALID,
                     "verificationMaterial.timestampVerificationData", err))
    return err->code;
  if (!absent_or_empty(json_object_get(ts, "rfc3161Timestamps")))
    return invalid(err,
                   "the bundle carries timestamps, which this host does not check (the signing "
                   "time is the signer's word): refused, not accepted unread");
  return CAP_OK;
}

/* The bundle around it: exactly the shape this host writes. */
static cap_code read_bundle(const json_t *b, dsse_parsed *out, cap_error *err) {
  static const char *const keys[] = {"mediaType", "verificationMaterial", "dsseEnvelope", NULL};
  if (!sj_keys(b, keys, keys, CAP_E_ENVELOPE_INVALID, "Sigstore bundle", err)) return err->code;
  const char *media = json_string_value(json_object_get(b, "mediaType"));
  if (!media || strcmp(media, SIGSTORE_BUNDLE_MEDIA_TYPE) != 0)
    return invalid(err, "the bundle's mediaType is not " SIGSTORE_BUNDLE_MEDIA_TYPE);
  const char *hint = NULL;
  if (read_material(json_object_get(b, "verificationMaterial"), &hint, err)) return err->code;
  cap_code rc = read_envelope(json_object_get(b, "dsseEnvelope"), out, err);
  if (!rc && out->keyid[0] && hint[0] && strcmp(hint, out->keyid) != 0)
    rc = invalid(err, "the bundle's key hint and the signature's keyid differ");
  if (!rc && !out->keyid[0] && strlen(hint) < sizeof out->keyid)
    snprintf(out->keyid, sizeof out->keyid, "%s", hint);
  return rc;
}

cap_code dsse_parse(const char *text, size_t len, dsse_parsed *out, cap_error *err) {
  memset(out, 0, sizeof *out);
  if (len > DSSE_MAX_BYTES)
    return cap_fail(err, CAP_E_ENVELOPE_INVALID, "%zu bytes: more than the %u an envelope may have", len,
                    DSSE_MAX_BYTES);
  sj_limits lim = {16, 4096};
  json_t *v = sj_parse_as(text, len, &lim, CAP_E_ENVELOPE_INVALID, "envelope", err);
  if (!v) return err->code;
  /* The unsigned payload written beside the envelopes, given by mistake. */
  if (json_object_get(v, "_type") && json_object_get(v, "predicateType")) {
    json_decref(v);
    return cap_fail(err, CAP_E_ENVELOPE_INVALID,
                    "this is an unsigned in-toto statement (NAME.intoto.json, the "
                    "payload), not a signed one: pass NAME.dsse.json or NAME.sigstore.json beside it "
                    "(written when --statement had a key)");
  }
  cap_code rc = json_object_get(v, "mediaType") ? read_bundle(v, out, err) : read_envelope(v, out, err);
  json_decref(v);
  if (rc) dsse_parsed_free(out);
  return rc;
}

cap_code dsse_verify(const dsse_parsed *p, const signing_key *key, cap_error *err) {
  /* A keyid is a hint, never proof (the signature is): either id of the
   * given key passes, as earlier statements carried the DER digest. */
  if (p->keyid[0] && strcmp(p->keyid, key->keyid) != 0 && strcmp(p->keyid, key->der_sha256) != 0)
    return cap_fail(err, CAP_E_SIGNATURE_INVALID, "signed by key %.64s, not by the key given (%s)", p->keyid,
                    key->keyid);
  size_t pae_len;
  unsigned char *pae = dsse_pae(DSSE_PAYLOAD_TYPE, p->payload, p->payload_len, &pae_len);
  bool ok = pae && signing_key_verify(key, pae, pae_len, p->sig, p->sig_len);
  free(pae);
  return ok ? CAP_OK
            : cap_fail(err, CAP_E_SIGNATURE_INVALID,
                       "the signature is not the %s key %s's over the envelope's PAE",
                       signing_key_algorithm_name(key->algorithm), key->keyid);
}

void dsse_parsed_free(dsse_parsed *p) {
  free(p->payload);
  free(p->sig);
  p->payload = p->sig = NULL;
}
