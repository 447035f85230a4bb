/* attest/file_uri.c: a file:// URI is read back only in the one form this
 * host writes for a normal absolute path (issue 47.2). */
#include <string.h>

#include "statement/file_uri.h"
#include "unit.h"

static void expect_path(const char *uri, const char *want) {
  char path[256];
  if (!file_uri_path(uri, path, sizeof path)) fail_msg("refused %s", uri);
  assert_string_equal(path, want);
}

static void expect_refused(const char *uri) {
  char path[256];
  if (file_uri_path(uri, path, sizeof path)) fail_msg("read %s as %s", uri, path);
}

static void reads_what_it_writes(void **state) {
  (void)state;
  expect_path("file:///work/examples/echo-capsule", "/work/examples/echo-capsule");
  expect_path("file:///a%20b/c%23d%25", "/a b/c#d%");
  expect_path("file:///caf%C3%A9", "/caf\xc3\xa9");
  char uri[256], path[256];
  assert_true(file_uri("/x y/z", uri, sizeof uri));
  assert_string_equal(uri, "file:///x%20y/z");
  assert_true(file_uri_path(uri, path, sizeof path));
  assert_string_equal(path, "/x y/z");
}

static void refuses_every_other_form(void **state) {
  (void)state;
  expect_refused("https://e.vil/x"); /* not a file URI */
  expect_refused("file://host/x");   /* a host */
  expect_refused("file:///a b/c");   /* a raw space */
  expect_refused("file:///a%2fb");   /* lowercase hex */
  expect_refused("file:///a%2Fb");   /* an encoded '/' */
  expect_refused("file:///%41");     /* an unreserved byte encoded */
  expect_refused("file:///a%00b");   /* a NUL */
  expect_refused("file:///a%2");     /* cut short */
  expect_refused("file:///a/../b");  /* not normal */
  expect_refused("file:///a//b");
  expect_refused("file:///a/");
  expect_refused("file:");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reads_what_it_writes),
      cmocka_unit_test(refuses_every_other_form),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
