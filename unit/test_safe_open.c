/* common/safe_open.c: the plain paths that may cross into a launch document. */
#include <stdbool.h>

#include "safe_open.h"
#include "unit.h"

static void plain_paths(void **state) {
  (void)state;
  static const char *const abs_ok[] = {"/a", "/a/b.txt", "/usr/lib/x86_64-linux-gnu/libc.so.6", NULL};
  static const char *const abs_bad[] = {"",        "/",   "a",    "//a",   "/a/", "/a//b", "/a/./b",
                                        "/a/../b", "/..", "/a/.", "/a\nb", "--x", NULL};
  static const char *const rel_ok[] = {"a", "a/b", "ref/context.txt", ".hidden", "a..b", NULL};
  static const char *const rel_bad[] = {"",     "/a",   "a/", "a//b", "./a",  "a/./b",
                                        "../a", "a/..", ".",  "..",   "a\nb", NULL};
  unit_rule_table(so_is_plain_absolute, "absolute path", abs_ok, abs_bad);
  unit_rule_table(so_is_plain_relative, "relative path", rel_ok, rel_bad);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(plain_paths)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
