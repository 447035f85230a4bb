/* common/launch_doc.c: the launch document as the launcher parses it
 * (accept and reject tables) and as the host encodes it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch_doc.h"
#include "launch_doc_fixture.h"
#include "unit.h"

static void valid_document_is_accepted(void **state) {
  (void)state;
  launch_doc doc;
  assert_int_equal(parse_text(VALID, &doc), CAP_OK);
  assert_int_equal(doc.mount_count, 4);
  assert_int_equal(doc.ceilings.memory_bytes, 268435456);
  assert_int_equal(doc.ceilings.open_files, 128);
  assert_int_equal(doc.mounts[1].label, LD_LOADER);
  assert_int_equal(doc.mounts[3].label, LD_WORKSPACE_READ);
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
      /* The loader has one place, must be hashed, and cannot be left out. */
      {"\"/tmp/.capsule/cell-loader.cjs\"", "\"/runtime/loader.cjs\""},
      {"\"ino\":6,\"sha256\":\"" SHA "\"", "\"ino\":6"},
      {"\"label\":\"loader\"", "\"label\":\"runtime\""},
      {"\"label\":\"loader\"", "\"label\":\"snapshot\""},
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
  static const char *const rows[] = {"",       "[]", "{}", "null", "{\"protocol\":\"dsh-capsule-launch/0\"}",
                                     VALID "x"};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    launch_doc doc;
    if (parse_text(rows[i], &doc) == CAP_OK) fail_msg("accepted row %zu", i);
  }
}

/* parse -> encode -> parse gives the same document, and encoding is a
 * fixed point: the host's encoder and the launcher's parser agree. */
static void encode_round_trips(void **state) {
  (void)state;
  launch_doc a, b;
  assert_int_equal(parse_text(VALID, &a), CAP_OK);
  cap_error err = {0};
  char *text = launch_doc_encode(&a, &err);
  assert_non_null(text);
  assert_int_equal(parse_text(text, &b), CAP_OK);
  assert_string_equal(a.bwrap_path, b.bwrap_path);
  assert_int_equal(a.bwrap_ino, b.bwrap_ino);
  assert_int_equal(a.tmpfs_bytes, b.tmpfs_bytes);
  assert_int_equal(a.max_old_space_mb, b.max_old_space_mb);
  assert_string_equal(a.permission_flag, b.permission_flag);
  assert_int_equal(a.disable_sigusr1, b.disable_sigusr1);
  assert_string_equal(a.seccomp_sha256, b.seccomp_sha256);
  assert_memory_equal(&a.ceilings, &b.ceilings, sizeof a.ceilings);
  assert_int_equal(a.mount_count, b.mount_count);
  for (size_t i = 0; i < a.mount_count; i++) {
    assert_int_equal(a.mounts[i].label, b.mounts[i].label);
    assert_string_equal(a.mounts[i].dest, b.mounts[i].dest);
    assert_int_equal(a.mounts[i].ino, b.mounts[i].ino);
  }
  char *again = launch_doc_encode(&b, &err);
  assert_non_null(again);
  assert_string_equal(text, again);
  free(text);
  free(again);
  launch_doc_free(&a);
  launch_doc_free(&b);
}

/* The encoder checks its output with the parser: a document the launcher
 * would refuse is never written. */
static void encoder_refuses_what_the_parser_refuses(void **state) {
  (void)state;
  launch_doc doc;
  assert_int_equal(parse_text(VALID, &doc), CAP_OK);
  doc.mounts[2].dest = "/workspace/elsewhere.txt"; /* not /workspace/<path> */
  cap_error err = {0};
  assert_null(launch_doc_encode(&doc, &err));
  assert_int_equal(err.code, CAP_E_LAUNCH_DOC_INVALID);
  launch_doc_free(&doc);
}

/* The RFC's example (section 8) is a document the launcher accepts. */
static void rfc_example_parses(void **state) {
  (void)state;
  FILE *f = fopen("docs/RFC.md", "r");
  assert_non_null(f);
  static char rfc[1 << 20];
  size_t n = fread(rfc, 1, sizeof rfc - 1, f);
  fclose(f);
  rfc[n] = '\0';
  char *section = strstr(rfc, "## 8. The launch document");
  assert_non_null(section);
  char *start = strstr(section, "```json\n");
  assert_non_null(start);
  start += strlen("```json\n");
  char *end = strstr(start, "```");
  assert_non_null(end);
  *end = '\0';
  launch_doc doc;
  assert_int_equal(parse_text(start, &doc), CAP_OK);
  assert_int_equal(doc.mount_count, 6);
  launch_doc_free(&doc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(valid_document_is_accepted),
      cmocka_unit_test(mutations_are_refused),
      cmocka_unit_test(garbage_is_refused),
      cmocka_unit_test(encode_round_trips),
      cmocka_unit_test(encoder_refuses_what_the_parser_refuses),
      cmocka_unit_test(rfc_example_parses),
  };
  return cmocka_run_group_tests_name("launch_doc", tests, NULL, NULL);
}
