/* admit/capsule.c and admit/bundle.c: a capsule's bytes admitted before
 * anything runs: the pinned digest, and the one bundle admission. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admit/bundle.h"
#include "admit/capsule.h"
#include "admit/config.h"
#include "digest.h"
#include "unit.h"

static const char artifact[] = "export default {};\n";
static char sha[SHA256_HEX_LEN + 1];
static char dir[64];

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/unit-capsule-XXXXXX");
  if (!mkdtemp(dir) || !digest_sha256_hex(artifact, strlen(artifact), sha)) return -1;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

static void manifest_text(char *out, size_t cap, const char *id, const char *digest) {
  snprintf(out, cap,
           "{\"protocol\":\"dsh-capsule/0\",\"id\":\"%s\",\"entry\":\"guest.mjs\",\"integrity\":"
           "{\"sha256\":\"%s\"},\"contributes\":{\"tools\":[\"echo\"],\"promptSections\":[]},"
           "\"requests\":[]}",
           id, digest);
}

/* Writes a bundle of the manifest and (name, bytes); returns its path. */
static const char *pack(const char *file, const char *mtext, const char *name, const char *bytes) {
  static char path[128];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  cap_error err = {0};
  assert_int_equal(bundle_write(path, mtext, strlen(mtext), name, bytes, bytes ? strlen(bytes) : 0, &err),
                   CAP_OK);
  return path;
}

static void the_digest_is_the_pinned_one(void **state) {
  (void)state;
  manifest m = {.entry = "guest.mjs", .sha256 = sha};
  char hex[SHA256_HEX_LEN + 1];
  cap_error err = {0};
  assert_int_equal(capsule_check_digest(&m, artifact, strlen(artifact), hex, &err), CAP_OK);
  assert_int_equal(capsule_check_digest(&m, "export default 1;\n", 18, hex, &err), CAP_E_INTEGRITY_MISMATCH);
  assert_non_null(strstr(err.message, sha)); /* names the pin and the actual digest */
  assert_non_null(strstr(err.message, hex));
}

static cap_code admit(const char *path, const char *policy_id) {
  host_config cfg;
  config_defaults(&cfg);
  json_t *tools = unit_json("[\"echo\"]"), *none = unit_json("[]");
  capsule_config policy = {.capsule_id = policy_id, .tools = tools, .prompt_sections = none, .grants = none};
  manifest m;
  bundle_contents b;
  char hex[SHA256_HEX_LEN + 1];
  cap_error err = {0};
  cap_code rc = capsule_admit_bundle(path, policy_id ? &policy : NULL, &cfg.limits, &m, &b, hex, &err);
  if (rc != err.code) fail_msg("code %d, err %d", rc, err.code);
  bundle_contents_free(&b);
  manifest_free(&m);
  json_decref(tools);
  json_decref(none);
  return rc;
}

static void bundles_are_admitted_whole_or_not_at_all(void **state) {
  (void)state;
  char good[512], wrong_digest[512];
  manifest_text(good, sizeof good, "x.cap", sha);
  manifest_text(wrong_digest, sizeof wrong_digest, "x.cap",
                "0000000000000000000000000000000000000000000000000000000000000000");
  assert_int_equal(admit(pack("ok.tar.gz", good, "guest.mjs", artifact), "x.cap"), CAP_OK);
  assert_int_equal(admit(pack("ok2.tar.gz", good, "guest.mjs", artifact), NULL),
                   CAP_OK); /* inspect: no policy */
  assert_int_equal(admit(pack("id.tar.gz", good, "guest.mjs", artifact), "y.cap"), CAP_E_POLICY_ID_MISMATCH);
  assert_int_equal(admit(pack("pin.tar.gz", wrong_digest, "guest.mjs", artifact), "x.cap"),
                   CAP_E_INTEGRITY_MISMATCH);
  assert_int_equal(admit(pack("name.tar.gz", good, "other.mjs", artifact), "x.cap"),
                   CAP_E_BUNDLE_EXTRA_ENTRY);
  char missing[128];
  snprintf(missing, sizeof missing, "%s/missing.tar.gz", dir);
  assert_int_equal(admit(missing, "x.cap"), CAP_E_BUNDLE_OPEN);
}

static void bundle_bytes_round_trip_and_garbage_is_refused(void **state) {
  (void)state;
  char good[512];
  manifest_text(good, sizeof good, "x.cap", sha);
  const char *path = pack("rt.tar.gz", good, "guest.mjs", artifact);
  host_config cfg;
  config_defaults(&cfg);
  bundle_contents b;
  cap_error err = {0};
  assert_int_equal(bundle_read_path(path, &cfg.limits, &b, &err), CAP_OK);
  assert_int_equal(b.manifest_len, strlen(good));
  assert_memory_equal(b.other, artifact, strlen(artifact));
  assert_string_equal(b.other_name, "guest.mjs");
  bundle_contents_free(&b);
  static const char garbage[] = "\x1f\x8b\x08\x00not really gzip";
  assert_int_equal(bundle_read_memory(garbage, sizeof garbage - 1, &cfg.limits, &b, &err),
                   CAP_E_BUNDLE_FORMAT);
  bundle_contents_free(&b);
}

/* The digest an attestation names a bundle by is of the very bytes the
 * admission read (hashed as they were inflated), equal to the file's. */
static void the_bundle_digest_is_of_the_bytes_admitted(void **state) {
  (void)state;
  char good[512];
  manifest_text(good, sizeof good, "x.cap", sha);
  const char *path = pack("digest.tar.gz", good, "guest.mjs", artifact);
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  static char bytes[1 << 16];
  size_t len = fread(bytes, 1, sizeof bytes, f);
  fclose(f);
  char whole[SHA256_HEX_LEN + 1];
  assert_true(digest_sha256_hex(bytes, len, whole));
  host_config cfg;
  config_defaults(&cfg);
  bundle_contents b;
  cap_error err = {0};
  assert_int_equal(bundle_read_path(path, &cfg.limits, &b, &err), CAP_OK);
  assert_string_equal(b.sha256, whole);
  bundle_contents_free(&b);
  assert_int_equal(bundle_read_memory(bytes, len, &cfg.limits, &b, &err), CAP_OK);
  assert_string_equal(b.sha256, whole);
  bundle_contents_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(the_digest_is_the_pinned_one),
      cmocka_unit_test(bundles_are_admitted_whole_or_not_at_all),
      cmocka_unit_test(bundle_bytes_round_trip_and_garbage_is_refused),
      cmocka_unit_test(the_bundle_digest_is_of_the_bytes_admitted),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
