/* attest/signing_key.c: key pairs as keygen writes them, signing and
 * checking through OpenSSL's EVP, and the refusals around the key. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "statement/signing_key.h"
#include "unit.h"

static char dir[64];

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/unit-key-XXXXXX");
  unsetenv(ATTEST_KEY_ENV);
  return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

static void round_trip(key_algorithm algorithm, const char *name) {
  char prefix[128], priv[160], pub[160];
  snprintf(prefix, sizeof prefix, "%s/%s", dir, name);
  snprintf(priv, sizeof priv, "%s.key", prefix);
  snprintf(pub, sizeof pub, "%s.pub", prefix);
  json_t *report = NULL;
  cap_error err = {0};
  assert_int_equal(signing_key_generate(prefix, algorithm, &report, &err), CAP_OK);
  struct stat st;
  assert_int_equal(stat(priv, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0600);
  signing_key sk, pk;
  bool found;
  assert_int_equal(signing_key_load_private(priv, &sk, &found, &err), CAP_OK);
  assert_true(found && sk.algorithm == algorithm);
  assert_int_equal(signing_key_load_public(pub, &pk, &err), CAP_OK);
  assert_string_equal(sk.keyid, pk.keyid);
  assert_string_equal(json_string_value(json_object_get(report, "keyid")), pk.keyid);
  unsigned char *sig;
  size_t n;
  assert_int_equal(signing_key_sign(&sk, (const unsigned char *)"message", 7, &sig, &n, &err), CAP_OK);
  assert_true(signing_key_verify(&pk, (const unsigned char *)"message", 7, sig, n));
  assert_false(signing_key_verify(&pk, (const unsigned char *)"messagE", 7, sig, n));
  sig[n / 2] ^= 1;
  assert_false(signing_key_verify(&pk, (const unsigned char *)"message", 7, sig, n));
  free(sig);
  /* A public key cannot sign. */
  assert_int_equal(signing_key_sign(&pk, (const unsigned char *)"m", 1, &sig, &n, &err), CAP_E_KEY_INVALID);
  /* Never overwritten. */
  memset(&err, 0, sizeof err);
  json_decref(report);
  assert_int_equal(signing_key_generate(prefix, algorithm, &report, &err), CAP_E_KEY_INVALID);
  signing_key_free(&sk);
  signing_key_free(&pk);
}

static void ed25519_and_p256(void **state) {
  (void)state;
  round_trip(KEY_ED25519, "ed");
  round_trip(KEY_ECDSA_P256, "ec");
}

static void refusals(void **state) {
  (void)state;
  char priv[160];
  snprintf(priv, sizeof priv, "%s/ed.key", dir);
  chmod(priv, 0640);
  signing_key k;
  bool found;
  cap_error err = {0};
  assert_int_equal(signing_key_load_private(priv, &k, &found, &err), CAP_E_KEY_INVALID);
  assert_non_null(strstr(err.message, "chmod 600"));
  chmod(priv, 0600);
  /* No path and no environment: nothing found, nothing refused. */
  assert_int_equal(signing_key_load_private(NULL, &k, &found, &err), CAP_OK);
  assert_false(found);
  setenv(ATTEST_KEY_ENV, "not a key", 1);
  memset(&err, 0, sizeof err);
  assert_int_equal(signing_key_load_private(NULL, &k, &found, &err), CAP_E_KEY_INVALID);
  unsetenv(ATTEST_KEY_ENV);
  memset(&err, 0, sizeof err);
  assert_int_equal(
      signing_key_from_public_pem("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", &k, &err),
      CAP_E_KEY_INVALID);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(ed25519_and_p256), cmocka_unit_test(refusals)};
  return cmocka_run_group_tests(tests, setup, teardown);
}
