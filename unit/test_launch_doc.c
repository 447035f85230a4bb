/* The launch document as the launcher parses it (accept and reject
 * tables) and the exact bwrap argv it turns into. */
#include <stdlib.h>
#include <string.h>

#include "bwrap_argv.h"
#include "launch_doc.h"
#include "unit.h"

#define SHA "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define VALID                                                                               \
  "{\"protocol\":\"dsh-capsule-launch/0\","                                                 \
  "\"bwrap\":{\"path\":\"/usr/bin/bwrap\",\"dev\":1,\"ino\":2},\"tmpfsBytes\":65536,"        \
  "\"node\":{\"permissionFlag\":\"--experimental-permission\",\"maxOldSpaceSizeMb\":64,"    \
  "\"disableSigusr1\":false},\"seccompSha256\":\"" SHA "\","                                \
  "\"ceilings\":{\"memoryBytes\":268435456,\"cpuSeconds\":10,\"fileBytes\":1048576,"        \
  "\"openFiles\":128},\"mounts\":["                                                         \
  "{\"label\":\"runtime\",\"source\":\"/usr/bin/node\",\"dest\":\"/runtime/node\",\"dev\":1,\"ino\":3}," \
  "{\"label\":\"guest\",\"source\":\"/s/guest-0.mjs\",\"dest\":\"/guest/guest.mjs\",\"dev\":1," \
  "\"ino\":4,\"sha256\":\"" SHA "\"},"                                                      \
  "{\"label\":\"workspace-read\",\"root\":\"/ws\",\"path\":\"ref/a.txt\","                  \
  "\"dest\":\"/workspace/ref/a.txt\",\"dev\":1,\"ino\":5}]}"

static cap_code parse_text(const char *text, launch_doc *doc) {
  cap_error err = {0};
  cap_code rc = launch_doc_parse(text, strlen(text), doc, &err);
  if (rc != CAP_OK) assert_int_equal(err.code, CAP_E_LAUNCH_DOC_INVALID);
  return rc;
}

static void valid_document_is_accepted(void **state) {
  (void)state;
  launch_doc doc;
  assert_int_equal(parse_text(VALID, &doc), CAP_OK);
  assert_int_equal(doc.mount_count, 3);
  assert_int_equal(doc.ceilings.memory_bytes, 268435456);
  assert_int_equal(doc.ceilings.open_files, 128);
  assert_int_equal(doc.mounts[2].label, LD_WORKSPACE_READ);
  launch_doc_free(&doc);
}

/* Each row replaces one fragment of VALID; every result must be refused. */
static void mutations_are_refused(void **state) {
  (void)state;
  static const char *const rows[][2] = {
      {"\"openFiles\":128}", "\"openFiles\":128,\"processes\":1}"},
      {"\"memoryBytes\":268435456", "\"memoryBytes\":1048576"},
      {"\"cpuSeconds\":10", "\"cpuSeconds\":0"},
      {"\"openFiles\":128", "\"openFiles\":8"},
      {"\"ceilings\":{\"memoryBytes\":268435456,", "\"ceilingz\":{\"memoryBytes\":268435456,"},
      {"/guest/guest.mjs", "/guest/sub/guest.mjs"},
      {"\"/runtime/node\"", "\"/dev/node\""},
      {"\"/workspace/ref/a.txt\"", "\"/workspace/ref/b.txt\""},
      {"dsh-capsule-launch/0", "dsh-capsule-launch/1"},
      {"\"permissionFlag\":\"--experimental-permission\"", "\"permissionFlag\":\"--allow-all\""},
      {"\"source\":\"/usr/bin/node\"", "\"source\":\"usr/bin/node\""},
      {"\"ino\":3", "\"ino\":-3"},
      {"\"disableSigusr1\":false", "\"disableSigusr1\":0"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const char *at = strstr(VALID, rows[i][0]);
    assert_non_null(at);
    size_t pre = (size_t)(at - VALID), old = strlen(rows[i][0]);
    char *text = malloc(strlen(VALID) + strlen(rows[i][1]) + 1);
    assert_non_null(text);
    memcpy(text, VALID, pre);
    strcpy(text + pre, rows[i][1]);
    strcat(text, at + old);
    launch_doc doc;
    if (parse_text(text, &doc) == CAP_OK) fail_msg("accepted mutation %zu: %s", i, rows[i][1]);
    free(text);
  }
}

static void garbage_is_refused(void **state) {
  (void)state;
  static const char *const rows[] = {"", "[]", "{}", "null", "{\"protocol\":\"dsh-capsule-launch/0\"}",
                                     VALID "x"};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    launch_doc doc;
    if (parse_text(rows[i], &doc) == CAP_OK) fail_msg("accepted row %zu", i);
  }
}

static void bwrap_argv_is_exact(void **state) {
  (void)state;
  launch_doc doc;
  assert_int_equal(parse_text(VALID, &doc), CAP_OK);
  int fds[3] = {10, 11, 12};
  argv_list l;
  cap_error err = {0};
  assert_int_equal(bwrap_argv_build(&doc, fds, 13, &l, &err), CAP_OK);
  static const char *const want[] = {
      "bwrap", "--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL",
      "--die-with-parent", "--new-session", "--clearenv", "--setenv", "HOME", "/tmp", "--setenv",
      "PATH", "/runtime", "--hostname", "capsule", "--proc", "/proc", "--dev", "/dev", "--size",
      "65536", "--perms", "0700", "--tmpfs", "/tmp", "--ro-bind-fd", "10", "/runtime/node",
      "--ro-bind-fd", "11", "/guest/guest.mjs", "--ro-bind-fd", "12", "/workspace/ref/a.txt",
      "--remount-ro", "/", "--remount-ro", "/dev", "--info-fd", "5", "--seccomp", "13", "--chdir",
      "/tmp", "--", "/runtime/node", "--experimental-permission",
      "--allow-fs-read=/guest/guest.mjs", "--allow-fs-read=/workspace/ref/a.txt",
      "--allow-fs-read=/tmp/*", "--allow-fs-write=/tmp/*", "--no-addons",
      "--disable-warning=ExperimentalWarning", "--max-old-space-size=64", "--",
      "/guest/guest.mjs", NULL};
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
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(valid_document_is_accepted),
      cmocka_unit_test(mutations_are_refused),
      cmocka_unit_test(garbage_is_refused),
      cmocka_unit_test(bwrap_argv_is_exact),
  };
  return cmocka_run_group_tests_name("launch_doc", tests, NULL, NULL);
}
