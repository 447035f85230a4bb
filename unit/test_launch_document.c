/* cell/launch_document.c: what a cell is given, as the launcher will
 * parse it: every mount (runtime, its objects, loader, snapshot when
 * there is one, guest, each workspace grant at its derived destination)
 * and the ceilings with the reserved data of the Node line. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "admit/capsule.h"
#include "admit/config.h"
#include "cell/launch_document.h"
#include "host_state.h"
#include "launch_doc.h"
#include "unit.h"

static host h;

static int setup(void **state) {
  (void)state;
  memset(&h, 0, sizeof h);
  config_defaults(&h.cfg);
  strcpy(h.bwrap.path, "/usr/bin/bwrap");
  strcpy(h.node.executable.path, "/usr/bin/node");
  h.node.executable.dev = 1, h.node.executable.ino = 2;
  h.node.object_count = 1;
  strcpy(h.node.objects[0].dest, "/lib/x86_64-linux-gnu/libc.so.6");
  strcpy(h.node.objects[0].source.path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
  h.node.objects[0].source.dev = 1, h.node.objects[0].source.ino = 3;
  strcpy(h.loader.path, "/tmp/dsh-capsule-x/cell-loader.cjs");
  memset(h.loader.sha256, 'c', 64);
  memset(h.seccomp_sha256, 'b', 64);
  h.permission_flag = "--permission";
  h.node_reserved_data_mb = 512;
  return 0;
}

static cap_code build(const loaded_capsule *cap, const staged_file *guest, launch_doc *doc) {
  cap_error err = {0};
  char *text = launch_document_build(&h, guest, cap, &err);
  assert_non_null(text);
  cap_code rc = launch_doc_parse(text, strlen(text), doc, &err);
  free(text);
  return rc;
}

static void mounts_and_ceilings(void **state) {
  (void)state;
  staged_file guest = {.path = "/tmp/dsh-capsule-x/guest-0.mjs", .dev = 1, .ino = 9};
  memset(guest.sha256, 'a', 64);
  capsule_config cfg = {.workspace_root = "/ws"};
  loaded_capsule cap = {.cfg = &cfg};
  cap.workspace.files[0] = (workspace_file){"ref/a.txt", 1, 7, -1};
  cap.workspace.count = 1;
  launch_doc doc;
  assert_int_equal(build(&cap, &guest, &doc), CAP_OK);
  const char *want[][2] = {{"/usr/bin/node", "/runtime/node"},
                           {"/usr/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6"},
                           {h.loader.path, "/tmp/.capsule/cell-loader.cjs"},
                           {guest.path, "/guest/guest.mjs"},
                           {"ref/a.txt", "/workspace/ref/a.txt"}};
  assert_int_equal(doc.mount_count, 5);
  for (size_t i = 0; i < 5; i++) {
    const ld_mount *m = &doc.mounts[i];
    const char *source = m->label == LD_WORKSPACE_READ ? m->path : m->source;
    assert_string_equal(source, want[i][0]);
    assert_string_equal(m->dest, want[i][1]);
  }
  assert_string_equal(doc.permission_flag, "--permission");
  /* Node's reserved data is added to maxCellMemoryMb, never hidden. */
  assert_true(doc.ceilings.memory_bytes == (h.cfg.limits.max_cell_memory_mb + 512) << 20);
  launch_doc_free(&doc);
}

static void the_snapshot_is_mounted_only_once_adopted(void **state) {
  (void)state;
  staged_file guest = {.path = "/tmp/dsh-capsule-x/attest-only.mjs", .dev = 1, .ino = 8};
  memset(guest.sha256, 'a', 64);
  strcpy(h.snapshot.path, "/tmp/dsh-capsule-x/snapshot.blob");
  memset(h.snapshot.sha256, 'd', 64);
  launch_doc doc;
  assert_int_equal(build(NULL, &guest, &doc), CAP_OK);
  bool found = false;
  for (size_t i = 0; i < doc.mount_count; i++)
    if (doc.mounts[i].label == LD_SNAPSHOT) found = strcmp(doc.mounts[i].source, h.snapshot.path) == 0;
  assert_true(found);
  assert_int_equal(doc.mount_count, 5); /* runtime, object, loader, snapshot, guest */
  launch_doc_free(&doc);
  h.snapshot.path[0] = '\0';
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(mounts_and_ceilings),
                                     cmocka_unit_test(the_snapshot_is_mounted_only_once_adopted)};
  return cmocka_run_group_tests(tests, setup, NULL);
}
