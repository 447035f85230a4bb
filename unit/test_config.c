/* admit/config.c: the deployment's config, every field bounded. */
#include <string.h>

#include "admit/config.h"
#include "unit.h"

#define POLICY "\"policy\":{\"capsuleId\":\"x.cap\",\"tools\":[\"echo\"],\"promptSections\":[],\"grants\":[]}"

static cap_code parse(const char *text, host_config *cfg) {
  cap_error err = {0};
  cap_code rc = config_parse(text, strlen(text), cfg, &err);
  if (rc != err.code) fail_msg("code %d, err %d", rc, err.code);
  return rc;
}

static void valid_configs(void **state) {
  (void)state;
  host_config cfg;
  assert_int_equal(parse("{}", &cfg), CAP_OK);
  assert_int_equal(cfg.capsule_count, 0);
  config_free(&cfg);
  assert_int_equal(parse("{\"maxConcurrentCalls\":2,\"capsules\":[{\"root\":\"/c\"," POLICY "},"
                         "{\"bundle\":\"/b/x.capsule.tar.gz\",\"workspaceRoot\":\"/ws\"," POLICY "}]}",
                         &cfg),
                   CAP_OK);
  assert_int_equal(cfg.limits.max_concurrent_calls, 2);
  assert_int_equal(cfg.capsule_count, 2);
  assert_string_equal(cfg.capsules[0].manifest, "capsule.json");
  assert_string_equal(cfg.capsules[1].workspace_root, "/ws");
  config_free(&cfg);
}

static void refusals(void **state) {
  (void)state;
  struct {
    const char *text;
    cap_code code;
  } cases[] = {
      {"[]", CAP_E_CONFIG_INVALID},
      {"{\"maxFrameBytes\":1,\"maxFrameBytes\":2}", CAP_E_CONFIG_INVALID}, /* duplicate key */
      {"{\"unknownField\":1}", CAP_E_CONFIG_INVALID},
      {"{\"maxConcurrentCalls\":0}", CAP_E_CONFIG_INVALID},
      {"{\"maxConcurrentCalls\":1.5}", CAP_E_CONFIG_INVALID},
      {"{\"maxConcurrentCalls\":-1}", CAP_E_CONFIG_INVALID},
      {"{\"maxCellMemoryMb\":64,\"maxOldSpaceSizeMb\":64}", CAP_E_CONFIG_INVALID},
      {"{\"bubblewrapCommand\":\"\"}", CAP_E_CONFIG_INVALID},
      {"{\"capsules\":{}}", CAP_E_CONFIG_INVALID},
      {"{\"capsules\":[{\"root\":\"/c\"}]}", CAP_E_CONFIG_INVALID},
      {"{\"capsules\":[{\"root\":\"/c\",\"bundle\":\"/b\"," POLICY "}]}", CAP_E_CONFIG_INVALID},
      {"{\"capsules\":[{\"root\":\"/c/../d\"," POLICY "}]}", CAP_E_CAPSULE_ROOT_INVALID},
      {"{\"capsules\":[{\"bundle\":\"b.tar.gz\"," POLICY "}]}", CAP_E_BUNDLE_OPEN},
      {"{\"capsules\":[{\"root\":\"/c\",\"manifest\":\"../m.json\"," POLICY "}]}", CAP_E_MANIFEST_OPEN},
      {"{\"capsules\":[{\"root\":\"/c\",\"workspaceRoot\":\"ws\"," POLICY "}]}",
       CAP_E_WORKSPACE_ROOT_INVALID},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    host_config cfg;
    cap_code rc = parse(cases[i].text, &cfg);
    config_free(&cfg);
    if (rc != cases[i].code) fail_msg("%s: %s", cases[i].text, cap_code_name(rc));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(valid_configs), cmocka_unit_test(refusals)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
