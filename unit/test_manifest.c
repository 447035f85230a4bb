/* admit/manifest.c: capsule.json, validated without running anything. */
#include <stdio.h>
#include <string.h>

#include "admit/manifest.h"
#include "strict_json.h"
#include "unit.h"

#define SHA "c25c21ba65ecb18316b60ba3644ce7b424dcc185408435bbcf01231b8863d29d"

static cap_code parse(const char *entry, const char *sha, const char *tools, const char *extra,
                      long long max_contributions, manifest *m) {
  char text[1024];
  snprintf(text, sizeof text,
           "{\"protocol\":\"dsh-capsule/0\",\"id\":\"example.echo\",\"entry\":\"%s\","
           "\"integrity\":{\"sha256\":\"%s\"},\"contributes\":{\"tools\":%s,"
           "\"promptSections\":[\"capsule.guide\"]},\"requests\":[]%s}",
           entry, sha, tools, extra);
  sj_limits lim = {32, 1000};
  cap_error err = {0};
  cap_code rc = manifest_parse(text, strlen(text), &lim, max_contributions, m, &err);
  if (rc != err.code) fail_msg("code %d, err %d", rc, err.code);
  return rc;
}

static void valid_manifest(void **state) {
  (void)state;
  manifest m;
  assert_int_equal(parse("./guest.mjs", SHA, "[\"capsule_echo\"]", "", 16, &m), CAP_OK);
  assert_string_equal(m.entry, "guest.mjs"); /* "./" stripped */
  assert_string_equal(m.id, "example.echo");
  assert_int_equal(json_array_size(m.tools), 1);
  manifest_free(&m);
}

static void refusals(void **state) {
  (void)state;
  struct {
    const char *entry, *sha, *tools, *extra;
    long long max;
    cap_code code;
  } cases[] = {
      {"../guest.mjs", SHA, "[]", "", 16, CAP_E_ENTRY_OPEN},
      {"/etc/guest.mjs", SHA, "[]", "", 16, CAP_E_ENTRY_OPEN},
      {"guest.mjs", "C25C21BA65ECB18316B60BA3644CE7B424DCC185408435BBCF01231B8863D29D", "[]", "", 16,
       CAP_E_MANIFEST_INVALID},
      {"guest.mjs", "abc", "[]", "", 16, CAP_E_MANIFEST_INVALID},
      {"guest.mjs", SHA, "[\"run_code\"]", "", 16, CAP_E_MANIFEST_INVALID},
      {"guest.mjs", SHA, "[\"a\",\"a\"]", "", 16, CAP_E_MANIFEST_INVALID},
      {"guest.mjs", SHA, "[\"a\"]", ",\"unknown\":1", 16, CAP_E_MANIFEST_INVALID},
      {"guest.mjs", SHA, "[\"a\",\"b\"]", "", 2, CAP_E_DESCRIBE_LIMIT},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    manifest m;
    cap_code rc = parse(cases[i].entry, cases[i].sha, cases[i].tools, cases[i].extra, cases[i].max, &m);
    manifest_free(&m);
    if (rc != cases[i].code) fail_msg("case %zu: %s", i, cap_code_name(rc));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(valid_manifest), cmocka_unit_test(refusals)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
