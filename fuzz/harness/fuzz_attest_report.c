/* Attestation reports from the world probe and the cell probe, checked
 * against a fixed host view passed in as values (no host, no live machine
 * state), so every
 * path, success included, is reachable. The first byte picks: bit 0 the
 * world report, else the cell report; bit 1 a host that mounted a startup
 * snapshot. make_seeds.py writes reports that match this view exactly. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "attest/attest_report.h"
#include "fuzz_reach.h"
#include "runtime_scan.h"
#include "strict_json.h"

/* The host's view: the Node it resolved (with its shared objects) and bwrap. */
static void fake_view(runtime_view *node, file_identity *bwrap) {
  memset(node, 0, sizeof *node);
  memset(bwrap, 0, sizeof *bwrap);
  strcpy(node->executable.path, "/usr/bin/node");
  node->executable.dev = 1, node->executable.ino = 2, node->executable.size = 3;
  node->object_count = 2;
  strcpy(node->objects[0].dest, "/lib/x86_64-linux-gnu/libc.so.6");
  strcpy(node->objects[0].source.path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
  strcpy(node->objects[1].dest, "/lib64/ld-linux-x86-64.so.2");
  strcpy(node->objects[1].source.path, "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
  strcpy(bwrap->path, "/usr/bin/bwrap");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static runtime_view node;
  static file_identity bwrap;
  static int ready;
  static json_t *world;
  if (!ready) {
    fake_view(&node, &bwrap);
    /* The fake host's world: the one the seeds' world reports describe. */
    world = json_pack("{s:s,s:{s:i,s:s},s:i,s:i}", "mountNamespace", "mnt:[4026531832]", "root", "dev", 1,
                      "ino", "2", "uid", 0, "gid", 0);
    ready = 1;
  }
  if (size < 1) return 0;
  sj_limits lim = {16, 5000};
  cap_error err = {0};
  json_t *r = sj_parse((const char *)data + 1, size - 1, &lim, CAP_E_ATTEST_OUTPUT_INVALID, "fuzz", &err);
  fuzz_reached("parse", r ? CAP_OK : err.code);
  if (!r) return 0;
  const char *challenge = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
  int snapshot = data[0] & 2;
  if (data[0] & 1)
    fuzz_reached("world", attest_report_check_world(&node, &bwrap, world, r, challenge, &err));
  else
    fuzz_reached(snapshot ? "cell-snapshot" : "cell",
                 attest_report_check_cell(&node, "v20.20.2", snapshot != 0, r, challenge, &err));
  json_decref(r);
  return 0;
}
