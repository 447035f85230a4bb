/* serve/scheduler.c through its call-runner seam: no supervisor is forked;
 * a call's verdict is put where a supervisor's would be read from. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admit/capsule.h"
#include "call/verdict.h"
#include "host_state.h"
#include "serve/mcp.h"
#include "serve/scheduler.h"
#include "serve/server.h"
#include "unit.h"

static cap_code fake_start(host *h, const char *tool, const json_t *input, call_supervisor *sup,
                           cap_error *err) {
  (void)h, (void)tool, (void)input, (void)err;
  memset(sup, 0, sizeof *sup);
  sup->pid = -1; /* supervisor_finish's waitpid finds no such child */
  sup->pidfd = -1;
  sup->result_fd = -1;
  sup->assign_fd = -1;
  return CAP_OK;
}

static void fake_cancel(call_supervisor *sup) {
  (void)sup;
}

static const call_runner fake_runner = {fake_start, fake_cancel, NULL, NULL};

/* The audit line scheduler_finish writes for one call whose cell answered
 * ok, cancelled (or not) before its supervisor was joined. */
static char *log_of_a_call(bool cancel_before_join) {
  static host h;
  static loaded_capsule cap;
  config_defaults(&h.cfg);
  cap.descriptor = json_pack("{s:[{s:s,s:s,s:{s:s}}]}", "tools", "name", "capsule_echo", "description",
                             "echo", "inputSchema", "type", "object");
  h.caps = &cap;
  h.cap_count = 1;
  server s;
  memset(&s, 0, sizeof s);
  s.h = &h;
  s.runner = &fake_runner;
  s.events = &mcp_events;
  s.registry = json_pack("{s:O,s:[]}", "tools", json_object_get(cap.descriptor, "tools"), "promptSections");
  const char *call =
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
      "\"capsule_echo\",\"arguments\":{},\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
      "\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}";
  mcp_handle_line(&s, call, strlen(call));
  assert_int_equal(s.running, 1);
  json_t *id = json_integer(1);
  if (cancel_before_join) scheduler_cancel(&s, id);
  json_decref(id);
  json_t *v = verdict_result(unit_json("{\"isError\":false,\"output\":{}}"));
  s.slots[0].sup.buf = json_dumps(v, JSON_COMPACT);
  s.slots[0].sup.len = strlen(s.slots[0].sup.buf);
  json_decref(v);
  char *log = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&log, &len), *saved = stderr;
  stderr = mem; /* serve_log_call writes to stderr */
  scheduler_finish(&s, 0);
  stderr = saved;
  fclose(mem);
  assert_int_equal(s.running, 0);
  free(s.slots);
  free(s.out);
  json_decref(s.registry);
  json_decref(cap.descriptor);
  return log;
}

static void a_call_cancelled_while_its_cell_is_joined_is_logged_cancelled(void **state) {
  (void)state;
  char *log = log_of_a_call(true);
  if (!strstr(log, "call capsule_echo CALL_CANCELLED in ") || !strstr(log, "cancelled after it ended ok"))
    fail_msg("log: %s", log);
  free(log);
  log = log_of_a_call(false);
  if (!strstr(log, "call capsule_echo ok in ")) fail_msg("log: %s", log);
  free(log);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_call_cancelled_while_its_cell_is_joined_is_logged_cancelled),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
