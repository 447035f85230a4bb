/* Path and name rules: what may cross into a launch document or reach DSH. */
#include <stdbool.h>
#include <string.h>

#include "names.h"
#include "node_version.h"
#include "safe_open.h"
#include "unit.h"

/* rule must accept every string of ok and refuse every string of bad
 * (both NULL-terminated). */
static void rule_table(bool (*rule)(const char *), const char *what, const char *const *ok,
                       const char *const *bad) {
  for (; *ok; ok++)
    if (!rule(*ok)) fail_msg("refused %s %s", what, *ok);
  for (; *bad; bad++)
    if (rule(*bad)) fail_msg("accepted %s %s", what, *bad);
}

/* rule accepts a run of max 'a's and refuses one of max + 1. */
static void length_bound(bool (*rule)(const char *), size_t max) {
  char s[256];
  assert_true(max + 1 < sizeof s);
  memset(s, 'a', max + 1);
  s[max + 1] = '\0';
  assert_false(rule(s));
  s[max] = '\0';
  assert_true(rule(s));
}

static void plain_paths(void **state) {
  (void)state;
  static const char *const abs_ok[] = {"/a", "/a/b.txt", "/usr/lib/x86_64-linux-gnu/libc.so.6", NULL};
  static const char *const abs_bad[] = {"", "/", "a", "//a", "/a/", "/a//b", "/a/./b", "/a/../b", "/..",
                                        "/a/.", "/a\nb", "--x", NULL};
  static const char *const rel_ok[] = {"a", "a/b", "ref/context.txt", ".hidden", "a..b", NULL};
  static const char *const rel_bad[] = {"", "/a", "a/", "a//b", "./a", "a/./b", "../a", "a/..",
                                        ".", "..", "a\nb", NULL};
  rule_table(so_is_plain_absolute, "absolute path", abs_ok, abs_bad);
  rule_table(so_is_plain_relative, "relative path", rel_ok, rel_bad);
}

static void names(void **state) {
  (void)state;
  static const char *const id_ok[] = {"a", "example.echo", "x-1_2.y", "0abc", NULL};
  static const char *const id_bad[] = {"", "A", ".a", "-a", "a b", "a/b", "é", NULL};
  static const char *const tool_ok[] = {"capsule_echo", "A-b_9", "x", NULL};
  static const char *const tool_bad[] = {"", "run_code", "a b", "a.b", "a/b", NULL};
  rule_table(names_is_id, "id", id_ok, id_bad);
  rule_table(names_is_tool, "tool name", tool_ok, tool_bad);
  length_bound(names_is_id, 128);
  length_bound(names_is_tool, 64);
}

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
  const struct CMUnitTest tests[] = {cmocka_unit_test(plain_paths), cmocka_unit_test(names),
                                     cmocka_unit_test(node_versions)};
  return cmocka_run_group_tests_name("rules", tests, NULL, NULL);
}
