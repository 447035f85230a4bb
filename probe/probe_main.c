/* capsule-probe: the execution-world probe. Spawned by the host through the
 * cell spawn path with an empty environment; answers one attest.world
 * request with what this process sees, then completes the shutdown
 * handshake. It runs no guest code and trusts nothing from its input but
 * two paths, which it resolves itself. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "frame.h"
#include "runtime_scan.h"
#include "safe_open.h"
#include "strict_json.h"
#include "subproc.h"
#include "world_view.h"

#define PROBE_MAX_FRAME (1u << 20)

static json_t *read_frame(frame_buffer *fb) {
  sj_limits lim = {8, 64};
  for (;;) {
    cap_error err = {0};
    json_t *msg = NULL;
    frame_status st = frame_next(fb, PROBE_MAX_FRAME, &lim, &msg, &err);
    if (st == FRAME_READY) return msg;
    if (st == FRAME_ERROR) return NULL;
    char buf[4096];
    ssize_t n = read(0, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || frame_buffer_append(fb, buf, (size_t)n, PROBE_MAX_FRAME, &err)) return NULL;
  }
}

static void send_frame(json_t *msg) {
  unsigned char *buf;
  size_t len;
  cap_error err = {0};
  if (frame_encode(msg, PROBE_MAX_FRAME, &buf, &len, &err) == CAP_OK) {
    so_write_all(1, buf, len);
    free(buf);
  }
  json_decref(msg);
}

static const char *node_version(const char *node) {
  static char version[64];
  char *argv[] = {(char *)node, "--version", NULL};
  char *out = NULL;
  size_t len = 0;
  int status = 0;
  /* No version is the report's answer when node cannot run: the host compares. */
  if (subproc_run(argv, SUBPROC_STDOUT, 3000, 256, &out, &len, &status, NULL) != SUBPROC_DONE) return "";
  snprintf(version, sizeof version, "%.*s", (int)strcspn(out, "\r\n"), out);
  free(out);
  return version;
}

int main(void) {
  frame_buffer fb = {0};
  json_t *req = read_frame(&fb);
  const char *type = json_string_value(json_object_get(req, "type"));
  const char *challenge = json_string_value(json_object_get(req, "challenge"));
  const char *node = json_string_value(json_object_get(req, "node"));
  const char *bwrap = json_string_value(json_object_get(req, "bwrap"));
  if (!type || strcmp(type, "attest.world") != 0 || !challenge || !node || !bwrap) return 2;
  cap_error err = {0};
  runtime_view view;
  file_identity bw;
  if (runtime_scan(node, &view, &err) || runtime_identity(bwrap, &bw, &err)) {
    fprintf(stderr, "capsule-probe: %s\n", err.message);
    return 3;
  }
  json_t *report = runtime_world_json();
  json_t *runtime =
      json_pack("{s:s,s:s,s:o,s:s,s:o,s:o}", "type", "attest.world.result", "challenge", challenge, "node",
                runtime_identity_json(&view.executable), "nodeVersion", node_version(node), "bwrap",
                runtime_identity_json(&bw), "sharedObjects", runtime_objects_json(&view));
  json_object_update(report, runtime);
  json_decref(runtime);
  send_frame(report);
  json_decref(req);
  json_t *bye = read_frame(&fb);
  type = json_string_value(json_object_get(bye, "type"));
  if (!type || strcmp(type, "shutdown") != 0) return 4;
  json_decref(bye);
  send_frame(json_pack("{s:s}", "type", "shutdown.ack"));
  frame_buffer_free(&fb);
  return 0;
}
