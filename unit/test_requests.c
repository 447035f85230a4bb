/* admit/requests.c: the one syntax of manifest requests and policy grants. */
#include "admit/requests.h"
#include "unit.h"

static cap_code check(const char *text) {
  json_t *list = unit_json(text);
  cap_error err = {0};
  cap_code rc = requests_check_list(list, "requests", CAP_E_MANIFEST_INVALID, &err);
  if (rc != err.code) fail_msg("code %d but err %d", rc, err.code);
  json_decref(list);
  return rc;
}

static void requests(void **state) {
  (void)state;
  assert_int_equal(check("[]"), CAP_OK);
  assert_int_equal(check("[{\"kind\":\"workspace-read\",\"path\":\"ref/a.txt\"},"
                         "{\"kind\":\"workspace-read\",\"path\":\"ref/b.txt\"}]"),
                   CAP_OK);
  struct {
    const char *text;
    cap_code code;
  } bad[] = {
      {"[1]", CAP_E_MANIFEST_INVALID},
      {"[{\"path\":\"a\"}]", CAP_E_MANIFEST_INVALID},
      {"[{\"kind\":\"workspace-read\"}]", CAP_E_MANIFEST_INVALID},
      {"[{\"kind\":\"workspace-read\",\"path\":\"a\",\"mode\":\"r\"}]", CAP_E_MANIFEST_INVALID},
      {"[{\"kind\":\"teleport\",\"path\":\"a\"}]", CAP_E_MANIFEST_INVALID},
      {"[{\"kind\":\"workspace-write\",\"path\":\"a\"}]", CAP_E_REQUEST_UNSUPPORTED},
      {"[{\"kind\":\"network-connect\",\"path\":\"a\"}]", CAP_E_REQUEST_UNSUPPORTED},
      {"[{\"kind\":\"subprocess-exec\",\"path\":\"a\"}]", CAP_E_REQUEST_UNSUPPORTED},
      {"[{\"kind\":\"storage\",\"path\":\"a\"}]", CAP_E_REQUEST_UNSUPPORTED},
      {"[{\"kind\":\"workspace-read\",\"path\":\"../a\"}]", CAP_E_WORKSPACE_PATH_INVALID},
      {"[{\"kind\":\"workspace-read\",\"path\":\"/etc/passwd\"}]", CAP_E_WORKSPACE_PATH_INVALID},
      {"[{\"kind\":\"workspace-read\",\"path\":\"a//b\"}]", CAP_E_WORKSPACE_PATH_INVALID},
      {"[{\"kind\":\"workspace-read\",\"path\":\"a\"},{\"kind\":\"workspace-read\",\"path\":\"a\"}]",
       CAP_E_MANIFEST_INVALID},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    if (check(bad[i].text) != bad[i].code) fail_msg("%s: %s", bad[i].text, cap_code_name(check(bad[i].text)));
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(requests)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
