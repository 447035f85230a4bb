/* Attestation reports from the world probe and the cell probe, checked
 * against a fixed host view passed in (no live machine state), so every
 * path, success included, is reachable. The first byte picks: bit 0 the
 * world report, else the cell report; bit 1 a host that mounted a startup
 * snapshot. make_seeds.py writes reports that match this view exactly. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "attest_report.h"
#include "strict_json.h"
#include "fuzz_reach.h"

static host fake_host(void) {
  host h;
  memset(&h, 0, sizeof h);
  strcpy(h.node.executable.path, "/usr/bin/node");
  h.node.executable.dev = 1, h.node.executable.ino = 2, h.node.executable.size = 3;
  h.node.object_count = 2;
  strcpy(h.node.objects[0].dest, "/lib/x86_64-linux-gnu/libc.so.6");
  strcpy(h.node.objects[0].source.path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
  strcpy(h.node.objects[1].dest, "/lib64/ld-linux-x86-64.so.2");
  strcpy(h.node.objects[1].source.path, "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
  strcpy(h.bwrap.path, "/usr/bin/bwrap");
  strcpy(h.node_version, "v20.20.2");
  return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static host h, hs;
  static int ready;
  static json_t *world;
  if (!ready) {
    h = fake_host();
    hs = fake_host();
    strcpy(hs.snapshot.path, "/tmp/staging/snapshot.blob");
    /* The fake host's world: the one the seeds' world reports describe. */
    world = json_pack("{s:s,s:{s:i,s:i},s:i,s:i}", "mountNamespace", "mnt:[4026531832]", "root",
                      "dev", 1, "ino", 2, "uid", 0, "gid", 0);
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
    fuzz_reached("world", attest_check_world(snapshot ? &hs : &h, world, r, challenge, &err));
  else
    fuzz_reached(snapshot ? "cell-snapshot" : "cell", attest_check_cell(snapshot ? &hs : &h, r, challenge, &err));
  json_decref(r);
  return 0;
}
