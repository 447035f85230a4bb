/* admit/workspace.c: which workspace files a cell sees, resolved once and
 * pinned, and the warm cell's check that they are still those files. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "admit/workspace.h"
#include "unit.h"

static char root[256];

static void put(const char *rel, const char *text) {
  char p[512];
  snprintf(p, sizeof p, "%s/%s", root, rel);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static int setup(void **state) {
  (void)state;
  snprintf(root, sizeof root, "/tmp/unit-workspace-XXXXXX");
  if (!mkdtemp(root)) return -1;
  char p[512], q[512];
  snprintf(p, sizeof p, "%s/ref", root);
  mkdir(p, 0755);
  put("ref/a.txt", "a");
  put("ref/b.txt", "b");
  put("twice.txt", "2");
  snprintf(p, sizeof p, "%s/twice.txt", root);
  snprintf(q, sizeof q, "%s/ref/twice-alias.txt", root);
  if (link(p, q)) return -1;
  snprintf(p, sizeof p, "%s/link.txt", root);
  if (symlink("ref/a.txt", p)) return -1;
  snprintf(p, sizeof p, "%s/fifo", root);
  if (mkfifo(p, 0600)) return -1;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  return system(cmd) == 0 ? 0 : -1;
}

/* Resolves a one-request manifest for path; g is released by the caller. */
static cap_code resolve(const char *ws_root, const char *path, const char *staging, workspace_grants *g,
                        cap_error *err) {
  char text[300];
  snprintf(text, sizeof text, "[{\"kind\":\"workspace-read\",\"path\":\"%s\"}]", path);
  json_t *requests = unit_json(text);
  memset(g, 0, sizeof *g);
  cap_code rc = workspace_resolve(ws_root, requests, staging, 0, 0, g, err);
  /* The paths are the manifest's: keep the JSON for as long as g. */
  json_decref(requests);
  return rc;
}

static void regular_single_link_files_are_pinned(void **state) {
  (void)state;
  cap_error err = {0};
  workspace_grants g;
  json_t *requests = unit_json(
      "[{\"kind\":\"workspace-read\",\"path\":\"ref/a.txt\"},"
      "{\"kind\":\"workspace-read\",\"path\":\"ref/b.txt\"}]");
  memset(&g, 0, sizeof g);
  assert_int_equal(workspace_resolve(root, requests, "/var/empty/staging", 0, 0, &g, &err), CAP_OK);
  assert_int_equal(g.count, 2);
  struct stat st;
  char p[512];
  snprintf(p, sizeof p, "%s/ref/a.txt", root);
  assert_int_equal(stat(p, &st), 0);
  assert_true(g.files[0].ino == (unsigned long long)st.st_ino && g.files[0].pin_fd >= 0);
  assert_int_equal(workspace_unchanged(root, &g, &err), CAP_OK);
  workspace_release(&g);
  assert_int_equal(g.count, 0);
  json_decref(requests);
}

static void every_refusal_has_its_code(void **state) {
  (void)state;
  struct {
    const char *path;
    cap_code code;
  } cases[] = {
      {"missing.txt", CAP_E_WORKSPACE_TARGET_INVALID},
      {"link.txt", CAP_E_WORKSPACE_TARGET_INVALID}, /* a symbolic link */
      {"ref", CAP_E_WORKSPACE_TARGET_INVALID},      /* a directory */
      {"fifo", CAP_E_WORKSPACE_TARGET_INVALID},     /* never opened for reading */
      {"twice.txt", CAP_E_WORKSPACE_HARDLINK},      /* another name elsewhere */
      {"ref/twice-alias.txt", CAP_E_WORKSPACE_HARDLINK},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    cap_error err = {0};
    workspace_grants g;
    cap_code rc = resolve(root, cases[i].path, "/var/empty/staging", &g, &err);
    if (rc != cases[i].code || err.code != rc || !strstr(err.message, cases[i].path))
      fail_msg("%s: %s (%s)", cases[i].path, cap_code_name(rc), err.message);
    assert_int_equal(g.count, 0); /* nothing pinned for a refused grant */
    workspace_release(&g);
  }
}

static void the_root_and_staging_are_checked(void **state) {
  (void)state;
  cap_error err = {0};
  workspace_grants g;
  assert_int_equal(resolve(NULL, "ref/a.txt", "/var/empty/staging", &g, &err), CAP_E_WORKSPACE_ROOT_INVALID);
  memset(&err, 0, sizeof err);
  char file_root[512];
  snprintf(file_root, sizeof file_root, "%s/ref/a.txt", root);
  assert_int_equal(resolve(file_root, "x", "/var/empty/staging", &g, &err), CAP_E_WORKSPACE_ROOT_INVALID);
  /* Staging inside the workspace, or the workspace inside staging. */
  char inside[512];
  snprintf(inside, sizeof inside, "%s/ref", root);
  memset(&err, 0, sizeof err);
  assert_int_equal(resolve(root, "ref/a.txt", inside, &g, &err), CAP_E_WORKSPACE_STAGING_OVERLAP);
  memset(&err, 0, sizeof err);
  assert_int_equal(resolve(inside, "a.txt", root, &g, &err), CAP_E_WORKSPACE_STAGING_OVERLAP);
  /* The staged guest itself is never a workspace file. */
  struct stat st;
  char p[512];
  snprintf(p, sizeof p, "%s/ref/b.txt", root);
  assert_int_equal(stat(p, &st), 0);
  json_t *requests = unit_json("[{\"kind\":\"workspace-read\",\"path\":\"ref/b.txt\"}]");
  memset(&g, 0, sizeof g);
  memset(&err, 0, sizeof err);
  assert_int_equal(workspace_resolve(root, requests, "/var/empty/staging", (unsigned long long)st.st_dev,
                                     (unsigned long long)st.st_ino, &g, &err),
                   CAP_E_WORKSPACE_STAGING_OVERLAP);
  json_decref(requests);
  /* No requests: nothing to resolve, no root needed. */
  json_t *none = unit_json("[]");
  memset(&g, 0, sizeof g);
  assert_int_equal(workspace_resolve(NULL, none, "/s", 0, 0, &g, &err), CAP_OK);
  assert_int_equal(g.count, 0);
  json_decref(none);
}

static void lexical_containment(void **state) {
  (void)state;
  assert_true(workspace_path_within("/a/b", "/a"));
  assert_true(workspace_path_within("/a", "/a"));
  assert_true(workspace_path_within("/anything", "/"));
  assert_false(workspace_path_within("/ab", "/a"));
  assert_false(workspace_path_within("/a", "/a/b"));
}

static void a_replaced_or_removed_grant_is_noticed(void **state) {
  (void)state;
  cap_error err = {0};
  workspace_grants g;
  json_t *requests = unit_json("[{\"kind\":\"workspace-read\",\"path\":\"ref/a.txt\"}]");
  memset(&g, 0, sizeof g);
  assert_int_equal(workspace_resolve(root, requests, "/var/empty/staging", 0, 0, &g, &err), CAP_OK);
  /* Same name, new inode (the pin keeps the old number from being reused). */
  char p[512], tmp[512];
  snprintf(p, sizeof p, "%s/ref/a.txt", root);
  snprintf(tmp, sizeof tmp, "%s/ref/a.new", root);
  put("ref/a.new", "replaced");
  assert_int_equal(rename(tmp, p), 0);
  assert_int_equal(workspace_unchanged(root, &g, &err), CAP_E_LAUNCH_SOURCE_MISMATCH);
  assert_non_null(strstr(err.message, "ref/a.txt"));
  memset(&err, 0, sizeof err);
  assert_int_equal(unlink(p), 0);
  assert_int_equal(workspace_unchanged(root, &g, &err), CAP_E_LAUNCH_SOURCE_MISMATCH);
  put("ref/a.txt", "a");
  workspace_release(&g);
  json_decref(requests);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(regular_single_link_files_are_pinned),   cmocka_unit_test(every_refusal_has_its_code),
      cmocka_unit_test(the_root_and_staging_are_checked),       cmocka_unit_test(lexical_containment),
      cmocka_unit_test(a_replaced_or_removed_grant_is_noticed),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
