/* attest/attest_report.c: the two attestation proofs, checked against
 * the host's view passed in as values. */
#include <string.h>

#include "attest/attest_report.h"
#include "runtime_scan.h"
#include "unit.h"

#define CHALLENGE "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

static runtime_view node;
static file_identity bwrap;

static int setup(void **state) {
  (void)state;
  memset(&node, 0, sizeof node);
  strcpy(node.executable.path, "/usr/bin/node");
  node.executable.dev = 1, node.executable.ino = 2, node.executable.size = 3;
  node.object_count = 1;
  strcpy(node.objects[0].dest, "/lib/x86_64-linux-gnu/libc.so.6");
  strcpy(node.objects[0].source.path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
  strcpy(bwrap.path, "/usr/bin/bwrap");
  return 0;
}

static json_t *world_report(json_t **mine) {
  *mine = unit_json("{\"mountNamespace\":\"mnt:[1]\",\"root\":{\"dev\":1,\"ino\":2},\"uid\":0,\"gid\":0}");
  json_t *r = json_deep_copy(*mine);
  json_object_set_new(r, "type", json_string("attest.world.result"));
  json_object_set_new(r, "challenge", json_string(CHALLENGE));
  json_object_set_new(r, "node", runtime_identity_json(&node.executable));
  json_object_set_new(r, "nodeVersion", json_string("v20.20.2"));
  json_object_set_new(r, "bwrap", runtime_identity_json(&bwrap));
  json_object_set_new(r, "sharedObjects", runtime_objects_json(&node));
  return r;
}

static void world(void **state) {
  (void)state;
  json_t *mine, *r = world_report(&mine);
  cap_error err = {0};
  assert_int_equal(attest_report_check_world(&node, &bwrap, mine, r, CHALLENGE, &err), CAP_OK);
  struct {
    const char *key, *value;
    cap_code code;
  } mutations[] = {
      {"challenge", "\"ff\"", CAP_E_ATTEST_CHALLENGE_MISMATCH},
      {"mountNamespace", "\"mnt:[2]\"", CAP_E_ATTEST_WORLD_MISMATCH},
      {"uid", "1000", CAP_E_ATTEST_WORLD_MISMATCH},
      {"node", "{\"path\":\"/tmp/node\"}", CAP_E_ATTEST_WORLD_MISMATCH},
      {"sharedObjects", "[]", CAP_E_ATTEST_WORLD_MISMATCH},
      {"nodeVersion", "20", CAP_E_ATTEST_OUTPUT_INVALID},
      {"extra", "1", CAP_E_ATTEST_OUTPUT_INVALID},
  };
  for (size_t i = 0; i < sizeof mutations / sizeof *mutations; i++) {
    json_t *m = json_deep_copy(r);
    json_object_set_new(m, mutations[i].key, unit_json(mutations[i].value));
    memset(&err, 0, sizeof err);
    cap_code rc = attest_report_check_world(&node, &bwrap, mine, m, CHALLENGE, &err);
    if (rc != mutations[i].code) fail_msg("%s: %s", mutations[i].key, cap_code_name(rc));
    json_decref(m);
  }
  json_decref(r);
  json_decref(mine);
}

static void cell(void **state) {
  (void)state;
  json_t *r = unit_json("{\"type\":\"attest.result\",\"challenge\":\"" CHALLENGE
                        "\",\"version\":\"v20.20.2\","
                        "\"execPath\":\"/runtime/node\",\"sharedObjects\":[\"linux-vdso.so.1\","
                        "\"/lib/x86_64-linux-gnu/libc.so.6\"],\"pid\":2,\"uid\":0,\"gid\":0,"
                        "\"permissionModel\":true,\"snapshot\":false,\"permissionScopes\":{\"fs.read\":"
                        "\"denied\",\"fs.write\":\"denied\",\"child\":\"denied\",\"worker\":\"denied\","
                        "\"net\":\"allowed\"}}");
  cap_error err = {0};
  assert_int_equal(attest_report_check_cell(&node, "v20.20.2", false, r, CHALLENGE, &err), CAP_OK);
  /* The snapshot must be in use exactly when the host mounted one. */
  assert_int_equal(attest_report_check_cell(&node, "v20.20.2", true, r, CHALLENGE, &err),
                   CAP_E_ATTEST_WORLD_MISMATCH);
  assert_int_equal(attest_report_check_cell(&node, "v22.0.0", false, r, CHALLENGE, &(cap_error){0}),
                   CAP_E_ATTEST_WORLD_MISMATCH);
  struct {
    const char *key, *value;
    cap_code code;
  } mutations[] = {
      {"challenge", "\"00\"", CAP_E_ATTEST_CHALLENGE_MISMATCH},
      {"execPath", "\"/usr/bin/node\"", CAP_E_ATTEST_WORLD_MISMATCH},
      {"sharedObjects", "[\"/tmp/evil.so\"]", CAP_E_ATTEST_WORLD_MISMATCH},
      {"sharedObjects", "[7]", CAP_E_ATTEST_OUTPUT_INVALID},
      {"permissionModel", "false", CAP_E_ATTEST_WORLD_MISMATCH},
      {"snapshot", "\"no\"", CAP_E_ATTEST_WORLD_MISMATCH},
      /* The scopes the threat model names must be refused; net is recorded. */
      {"permissionScopes",
       "{\"fs.read\":\"denied\",\"fs.write\":\"denied\",\"child\":\"denied\","
       "\"worker\":\"allowed\"}",
       CAP_E_ATTEST_WORLD_MISMATCH},
      {"permissionScopes", "{\"fs.read\":\"denied\",\"fs.write\":\"denied\",\"child\":\"denied\"}",
       CAP_E_ATTEST_WORLD_MISMATCH},
      {"permissionScopes", "[]", CAP_E_ATTEST_OUTPUT_INVALID},
      {"permissionScopes", "{\"fs.read\":1}", CAP_E_ATTEST_OUTPUT_INVALID},
  };
  for (size_t i = 0; i < sizeof mutations / sizeof *mutations; i++) {
    json_t *m = json_deep_copy(r);
    json_object_set_new(m, mutations[i].key, unit_json(mutations[i].value));
    memset(&err, 0, sizeof err);
    cap_code rc = attest_report_check_cell(&node, "v20.20.2", false, m, CHALLENGE, &err);
    if (rc != mutations[i].code)
      fail_msg("%s=%s: %s", mutations[i].key, mutations[i].value, cap_code_name(rc));
    json_decref(m);
  }
  json_decref(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(world), cmocka_unit_test(cell)};
  return cmocka_run_group_tests(tests, setup, NULL);
}
