/* launcher/bwrap_argv.c: the exact bwrap argv a launch document becomes. */
#include "bwrap_argv.h"
#include "launch_doc_fixture.h"
#include "unit.h"

static void bwrap_argv_is_exact(void **state) {
  (void)state;
  launch_doc doc;
  assert_int_equal(parse_text(VALID, &doc), CAP_OK);
  int fds[4] = {10, 9, 11, 12};
  argv_list l;
  cap_error err = {0};
  assert_int_equal(bwrap_argv_build(&doc, fds, 13, &l, &err), CAP_OK);
  static const char *const want[] = {"bwrap",
                                     "--unshare-all",
                                     "--unshare-user",
                                     "--disable-userns",
                                     "--cap-drop",
                                     "ALL",
                                     "--die-with-parent",
                                     "--new-session",
                                     "--clearenv",
                                     "--setenv",
                                     "HOME",
                                     "/tmp",
                                     "--setenv",
                                     "PATH",
                                     "/runtime",
                                     "--hostname",
                                     "capsule",
                                     "--proc",
                                     "/proc",
                                     "--dev",
                                     "/dev",
                                     "--size",
                                     "65536",
                                     "--perms",
                                     "0700",
                                     "--tmpfs",
                                     "/tmp",
                                     "--ro-bind-fd",
                                     "10",
                                     "/runtime/node",
                                     "--ro-bind-fd",
                                     "9",
                                     "/tmp/.capsule/cell-loader.cjs",
                                     "--ro-bind-fd",
                                     "11",
                                     "/guest/guest.mjs",
                                     "--ro-bind-fd",
                                     "12",
                                     "/workspace/ref/a.txt",
                                     "--remount-ro",
                                     "/",
                                     "--remount-ro",
                                     "/dev",
                                     "--info-fd",
                                     "5",
                                     "--seccomp",
                                     "13",
                                     "--chdir",
                                     "/tmp",
                                     "--",
                                     "/runtime/node",
                                     "--experimental-permission",
                                     "--allow-fs-read=/guest/guest.mjs",
                                     "--allow-fs-read=/workspace/ref/a.txt",
                                     "--allow-fs-read=/tmp/*",
                                     "--allow-fs-write=/tmp/*",
                                     "--no-addons",
                                     "--disable-warning=ExperimentalWarning",
                                     "--max-old-space-size=64",
                                     "--",
                                     "/tmp/.capsule/cell-loader.cjs",
                                     "/guest/guest.mjs",
                                     NULL};
  size_t n = 0;
  for (; want[n]; n++) {
    assert_non_null(l.items[n]);
    assert_string_equal(l.items[n], want[n]);
  }
  assert_int_equal(l.count, n);
  assert_null(l.items[n]);
  argv_list_free(&l);
  launch_doc_free(&doc);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(bwrap_argv_is_exact)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
