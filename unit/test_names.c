/* admit/names.c: capsule ids and tool names, the names that reach DSH. */
#include <stdbool.h>
#include <string.h>

#include "admit/names.h"
#include "unit.h"

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

static void names(void **state) {
  (void)state;
  static const char *const id_ok[] = {"a", "example.echo", "x-1_2.y", "0abc", NULL};
  static const char *const id_bad[] = {"", "A", ".a", "-a", "a b", "a/b", "é", NULL};
  static const char *const tool_ok[] = {"capsule_echo", "A-b_9", "x", NULL};
  static const char *const tool_bad[] = {"", "run_code", "a b", "a.b", "a/b", NULL};
  unit_rule_table(names_is_id, "id", id_ok, id_bad);
  unit_rule_table(names_is_tool, "tool name", tool_ok, tool_bad);
  length_bound(names_is_id, 128);
  length_bound(names_is_tool, 64);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(names)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
