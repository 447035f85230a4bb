/* admit/describe.c: a describe.result must match the manifest exactly and
 * fit every limit before anything is published. */
#include <stdio.h>
#include <string.h>

#include "admit/config.h"
#include "admit/describe.h"
#include "admit/manifest.h"
#include "unit.h"

static cap_code admit(const char *tools, const char *sections, json_t **descriptor) {
  host_config cfg;
  config_defaults(&cfg);
  cfg.limits.max_description_bytes = 16;
  cfg.limits.max_prompt_bytes = 16;
  json_t *mj = unit_json("{\"tools\":[\"echo\"],\"sections\":[\"guide\"]}");
  manifest m = {
      .json = mj, .tools = json_object_get(mj, "tools"), .prompt_sections = json_object_get(mj, "sections")};
  char text[1024];
  snprintf(text, sizeof text, "{\"type\":\"describe.result\",\"tools\":%s,\"promptSections\":%s}", tools,
           sections);
  json_t *reply = unit_json(text);
  cap_error err = {0};
  cap_code rc = describe_admit(reply, &m, &cfg.limits, descriptor, &err);
  if (rc != err.code) fail_msg("code %d, err %d", rc, err.code);
  json_decref(reply);
  json_decref(mj);
  return rc;
}

#define TOOL(name, desc) \
  "{\"name\":\"" name "\",\"description\":\"" desc "\",\"inputSchema\":{\"type\":\"object\"}}"
#define SECTION(id, text) "{\"id\":\"" id "\",\"text\":\"" text "\"}"

static void exact_match_is_admitted(void **state) {
  (void)state;
  json_t *d = NULL;
  assert_int_equal(admit("[" TOOL("echo", "Echoes.") "]", "[" SECTION("guide", "Use echo.") "]", &d), CAP_OK);
  assert_int_equal(json_array_size(json_object_get(d, "tools")), 1);
  assert_null(json_object_get(d, "type"));
  json_decref(d);
}

static void every_difference_is_refused(void **state) {
  (void)state;
  struct {
    const char *tools, *sections;
    cap_code code;
  } cases[] = {
      {"[]", "[" SECTION("guide", "x") "]", CAP_E_DESCRIBE_MISMATCH},
      {"[" TOOL("other", "x") "]", "[" SECTION("guide", "x") "]", CAP_E_DESCRIBE_MISMATCH},
      {"[" TOOL("echo", "x") "," TOOL("echo", "x") "]", "[" SECTION("guide", "x") "]",
       CAP_E_DESCRIBE_MISMATCH},
      {"[" TOOL("echo", "x") "]", "[]", CAP_E_DESCRIBE_MISMATCH},
      {"[" TOOL("echo", "x") "]", "[" SECTION("other", "x") "]", CAP_E_DESCRIBE_MISMATCH},
      {"[" TOOL("echo", "") "]", "[" SECTION("guide", "x") "]", CAP_E_DESCRIBE_LIMIT},
      {"[" TOOL("echo", "a description of 31 bytes ...") "]", "[" SECTION("guide", "x") "]",
       CAP_E_DESCRIBE_LIMIT},
      {"[" TOOL("echo", "x") "]", "[" SECTION("guide", "a text of more than 16") "]", CAP_E_DESCRIBE_LIMIT},
      {"[" TOOL("echo", "x") "]", "[" SECTION("guide", "{{user}}") "]", CAP_E_PROMPT_TEMPLATE_REFUSED},
      {"[{\"name\":\"echo\",\"description\":\"x\"}]", "[" SECTION("guide", "x") "]",
       CAP_E_PROTOCOL_VIOLATION},
      {"[{\"name\":\"echo\",\"description\":\"x\",\"inputSchema\":{\"type\":\"object\"},\"x\":1}]",
       "[" SECTION("guide", "x") "]", CAP_E_PROTOCOL_VIOLATION},
      {"[{\"name\":\"echo\",\"description\":\"x\",\"inputSchema\":{\"$ref\":\"#\"}}]",
       "[" SECTION("guide", "x") "]", CAP_E_SCHEMA_INVALID},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    json_t *d = (json_t *)1;
    cap_code rc = admit(cases[i].tools, cases[i].sections, &d);
    if (rc != cases[i].code || d) fail_msg("case %zu: %s", i, cap_code_name(rc));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(exact_match_is_admitted),
                                     cmocka_unit_test(every_difference_is_refused)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
