/* The host's own work for one tool call, without the processes: build the
 * launch document, parse and verify it as the launcher does, build bwrap's
 * argv and the seccomp BPF, encode the describe and call frames, decode the
 * guest's three replies, compare the descriptor, validate the input and
 * admit the result. Run N times; callgrind counts it, or it times itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admit/call_result.h"
#include "admit/config.h"
#include "admit/schema.h"
#include "bwrap_argv.h"
#include "cell/launch_document.h"
#include "clock.h"
#include "digest.h"
#include "frame.h"
#include "host_state.h"
#include "launch_doc.h"
#include "seccomp_policy.h"
#include "strict_json.h"

static const char descriptor_text[] =
    "{\"tools\":[{\"name\":\"capsule_echo\",\"description\":\"Echo the given text back unchanged.\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\",\"maxLength\":4096}},"
    "\"required\":[\"text\"],\"additionalProperties\":false}}],\"promptSections\":[{\"id\":"
    "\"capsule.echo.guidance\",\"text\":\"Use capsule_echo to check that the capsule host is reachable.\"}]}";

static void one_call(host *h, const json_t *descriptor) {
  cap_error err = {0};
  char *doc = launch_document_build(h, &h->attest_guest, NULL, &err);
  if (!doc) return;
  launch_doc ld;
  if (launch_doc_parse(doc, strlen(doc), &ld, &err) == CAP_OK) {
    int fds[LAUNCH_DOC_MAX_MOUNTS];
    for (size_t i = 0; i < ld.mount_count; i++) fds[i] = 6 + (int)i;
    argv_list argv;
    if (bwrap_argv_build(&ld, fds, 99, &argv, &err) == CAP_OK) argv_list_free(&argv);
    launch_doc_free(&ld);
  }
  free(doc);
  size_t bpf_len;
  int sfd = seccomp_policy_memfd(&bpf_len, &err);
  if (sfd >= 0) close(sfd);
  json_t *input = json_pack("{s:s}", "text", "hello");
  json_t *msgs[2] = {json_pack("{s:s,s:s}", "type", "describe", "protocol", "dsh-capsule/0"),
                     json_pack("{s:s,s:s,s:O}", "type", "call", "tool", "capsule_echo", "input", input)};
  for (int i = 0; i < 2; i++) {
    unsigned char *buf;
    size_t len;
    if (frame_encode(msgs[i], 1 << 20, &buf, &len, &err) == CAP_OK) free(buf);
    json_decref(msgs[i]);
  }
  json_t *reply = json_deep_copy(descriptor);
  json_object_set_new(reply, "type", json_string("describe.result"));
  json_t *result = json_pack("{s:s,s:b,s:O}", "type", "call.result", "isError", 0, "output", input);
  json_t *ack = json_pack("{s:s}", "type", "shutdown.ack");
  json_t *replies[3] = {reply, result, ack};
  frame_buffer fb = {0};
  sj_limits lim = {36, 1 << 20};
  for (int i = 0; i < 3; i++) {
    unsigned char *buf;
    size_t len;
    if (frame_encode(replies[i], 1 << 20, &buf, &len, &err) == CAP_OK) {
      frame_buffer_append(&fb, buf, len, 1 << 20, &err);
      free(buf);
    }
  }
  json_t *got;
  int n = 0;
  while (frame_next(&fb, 1 << 20, &lim, &got, &err) == FRAME_READY) {
    if (n == 0) {
      json_object_del(got, "type");
      if (!json_equal(got, descriptor)) abort();
    } else if (n == 1) {
      json_t *admitted = NULL;
      host_limits hl = {.max_json_depth = 32, .max_json_nodes = 10000, .max_description_bytes = 4096};
      call_result_admit(got, &hl, &admitted, &err);
      json_decref(admitted);
    }
    json_decref(got);
    n++;
  }
  frame_buffer_free(&fb);
  schema_validate(json_object_get(json_array_get(json_object_get(descriptor, "tools"), 0), "inputSchema"),
                  input, &err);
  for (int i = 0; i < 3; i++) json_decref(replies[i]);
  json_decref(input);
}

int main(int argc, char **argv) {
  int iterations = argc > 1 ? atoi(argv[1]) : 1;
  host h;
  memset(&h, 0, sizeof h);
  cap_error err = {0};
  if (runtime_scan("/usr/bin/node", &h.node, &err) != CAP_OK) return 2;
  snprintf(h.bwrap.path, sizeof h.bwrap.path, "/usr/bin/bwrap");
  snprintf(h.attest_guest.path, sizeof h.attest_guest.path, "/tmp/dsh-capsule-bench/guest-0.mjs");
  memset(h.attest_guest.sha256, 'a', 64);
  snprintf(h.loader.path, sizeof h.loader.path, "/tmp/dsh-capsule-bench/cell-loader.cjs");
  memset(h.loader.sha256, 'c', 64);
  memset(h.seccomp_sha256, 'b', 64);
  config_defaults(&h.cfg);
  h.permission_flag = "--experimental-permission";
  json_t *descriptor = json_loads(descriptor_text, 0, NULL);
  long long t0 = mono_ms();
  for (int i = 0; i < iterations; i++) one_call(&h, descriptor);
  long long t1 = mono_ms();
  printf("%d iterations in %lld ms: %.1f us per call\n", iterations, t1 - t0,
         iterations ? (double)(t1 - t0) * 1000.0 / iterations : 0.0);
  json_decref(descriptor);
  return 0;
}
