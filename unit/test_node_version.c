/* common/node_version.c: which Node lines run cells, and with which flags. */
#include <stdbool.h>

#include "node_version.h"
#include "unit.h"

static void node_versions(void **state) {
  (void)state;
  struct {
    const char *text;
    bool supported;
    const char *flag;
    bool sigusr1;
  } rows[] = {
      {"v18.19.0\n", false, "--experimental-permission", false},
      {"v20.10.9", false, "--experimental-permission", false},
      {"v20.11.0", true, "--experimental-permission", false},
      {"v20.20.2\n", true, "--experimental-permission", false},
      {"v22.12.0", true, "--experimental-permission", false},
      {"v22.13.0", true, "--permission", false},
      {"v22.14.0", true, "--permission", true},
      {"v23.5.0", true, "--permission", false},
      {"v23.7.0", true, "--permission", true},
      {"v24.0.0", true, "--permission", true},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    node_version v;
    assert_true(node_version_parse(rows[i].text, &v));
    assert_int_equal(node_version_supported(v), rows[i].supported);
    assert_string_equal(node_permission_flag(v), rows[i].flag);
    assert_int_equal(node_can_disable_sigusr1(v), rows[i].sigusr1);
  }
  node_version v;
  assert_false(node_version_parse("20.11.0", &v));
  assert_false(node_version_parse("", &v));
  assert_false(node_version_parse(NULL, &v));
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(node_versions)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
