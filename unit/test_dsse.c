/* attest/dsse.c: PAE exactly as the DSSE specification defines it,
 * canonical base64 only, and the strict reader of envelopes and bundles. */
#include <stdlib.h>
#include <string.h>

#include "statement/dsse.h"
#include "unit.h"

static void pae_is_the_specifications(void **state) {
  (void)state;
  /* The DSSE protocol document's example. */
  size_t n;
  unsigned char *p = dsse_pae("http://example.com/HelloWorld", (const unsigned char *)"hello world", 11, &n);
  const char want[] = "DSSEv1 29 http://example.com/HelloWorld 11 hello world";
  assert_int_equal(n, sizeof want - 1);
  assert_memory_equal(p, want, n);
  free(p);
  p = dsse_pae("", (const unsigned char *)"", 0, &n);
  assert_int_equal(n, 12); /* "DSSEv1", " 0 ", "", " 0 ", "" */
  assert_memory_equal(p, "DSSEv1 0  0 ", 12);
  free(p);
}

static void only_canonical_base64_decodes(void **state) {
  (void)state;
  unsigned char *out;
  size_t n;
  assert_true(dsse_unbase64("aGVsbG8=", &out, &n));
  assert_int_equal(n, 5);
  assert_memory_equal(out, "hello", 5);
  free(out);
  assert_true(dsse_unbase64("", &out, &n));
  assert_int_equal(n, 0);
  free(out);
  static const char *const refused[] = {"aGVsbG8",  "aGVsbG9=", "aGVs bG8=", "aGVsbG8=\n", "aGVsbG8==",
                                        "=aGVsbG8", "aG=sbG8=", "aGVsbG8_",  "aGVsbA==x",  "YR=="};
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
    if (dsse_unbase64(refused[i], &out, &n)) fail_msg("decoded %s", refused[i]);
  char *enc = dsse_base64((const unsigned char *)"hello", 5);
  assert_string_equal(enc, "aGVsbG8=");
  free(enc);
}

static cap_code parse(const char *text, dsse_parsed *p) {
  cap_error err = {0};
  cap_code rc = dsse_parse(text, strlen(text), p, &err);
  if (rc != err.code) fail_msg("code %d, err %d", rc, err.code);
  return rc;
}

#define ENV(type, sigs) "{\"payload\":\"e30=\",\"payloadType\":\"" type "\",\"signatures\":" sigs "}"
#define SIG "{\"keyid\":\"k1\",\"sig\":\"AAAA\"}"

static void envelopes_and_bundles_are_read_strictly(void **state) {
  (void)state;
  dsse_parsed p;
  assert_int_equal(parse(ENV("application/vnd.in-toto+json", "[" SIG "]"), &p), CAP_OK);
  assert_int_equal(p.payload_len, 2);
  assert_memory_equal(p.payload, "{}", 2);
  assert_string_equal(p.keyid, "k1");
  dsse_parsed_free(&p);
  assert_int_equal(parse("{\"mediaType\":\"application/vnd.dev.sigstore.bundle.v0.3+json\","
                         "\"verificationMaterial\":{\"publicKey\":{\"hint\":\"k1\"},\"tlogEntries\":[]},"
                         "\"dsseEnvelope\":" ENV("application/vnd.in-toto+json", "[" SIG "]") "}",
                         &p),
                   CAP_OK);
  dsse_parsed_free(&p);
  struct {
    const char *text;
    cap_code code;
  } bad[] = {
      {ENV("application/json", "[" SIG "]"), CAP_E_ENVELOPE_PAYLOAD_TYPE},
      {ENV("application/vnd.in-toto+json", "[]"), CAP_E_ENVELOPE_INVALID},
      {ENV("application/vnd.in-toto+json", "[" SIG "," SIG "]"), CAP_E_ENVELOPE_INVALID},
      {ENV("application/vnd.in-toto+json", "[{\"sig\":\"\"}]"), CAP_E_ENVELOPE_INVALID},
      {ENV("application/vnd.in-toto+json", "[{\"sig\":\"AAAA\",\"extra\":1}]"), CAP_E_ENVELOPE_INVALID},
      {"{\"payload\":\"e30=\",\"payload\":\"e30=\",\"payloadType\":\"application/vnd.in-toto+json\","
       "\"signatures\":[" SIG "]}",
       CAP_E_ENVELOPE_INVALID},
      {"{\"mediaType\":\"application/vnd.dev.sigstore.bundle.v0.2+json\",\"verificationMaterial\":"
       "{\"publicKey\":{}},\"dsseEnvelope\":" ENV("application/vnd.in-toto+json", "[" SIG "]") "}",
       CAP_E_ENVELOPE_INVALID},
      {"{\"mediaType\":\"application/vnd.dev.sigstore.bundle.v0.3+json\",\"verificationMaterial\":"
       "{\"publicKey\":{\"hint\":\"k2\"}},\"dsseEnvelope\":" ENV("application/vnd.in-toto+json",
                                                                 "[" SIG "]") "}",
       CAP_E_ENVELOPE_INVALID},
      {"[]", CAP_E_ENVELOPE_INVALID},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cap_code rc = parse(bad[i].text, &p);
    if (rc != bad[i].code) fail_msg("case %zu: %s", i, cap_code_name(rc));
    assert_null(p.payload);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(pae_is_the_specifications),
                                     cmocka_unit_test(only_canonical_base64_decodes),
                                     cmocka_unit_test(envelopes_and_bundles_are_read_strictly)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
