/* Checks of the two attestation proofs against the host's own view. Pure:
 * the host's world is passed in (attest.c reads it once), so the fuzzer
 * can drive every path, success included. */
#include "attest_report.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launch_doc.h"
#include "runtime_scan.h"
#include "strict_json.h"

static cap_code mismatch(cap_error *err, const char *field) {
  return cap_fail(err, CAP_E_ATTEST_WORLD_MISMATCH, "world probe reports a different %s than the host sees",
                  field);
}

cap_code attest_report_check_world(const runtime_view *node_view, const file_identity *bwrap_id,
                                   const json_t *mine, const json_t *r, const char *challenge,
                                   cap_error *err) {
  static const char *const keys[] = {
      "type",           "challenge", "node", "nodeVersion", "bwrap", "sharedObjects",
      "mountNamespace", "root",      "uid",  "gid",         NULL};
  if (!sj_keys(r, keys, keys, CAP_E_ATTEST_OUTPUT_INVALID, "world report", err)) return err->code;
  const char *got = json_string_value(json_object_get(r, "challenge"));
  if (!got || strcmp(got, challenge) != 0)
    return cap_fail(err, CAP_E_ATTEST_CHALLENGE_MISMATCH, "world probe did not echo the challenge");
  json_t *node = runtime_identity_json(&node_view->executable);
  json_t *bwrap = runtime_identity_json(bwrap_id);
  json_t *objs = runtime_objects_json(node_view);
  const char *bad = NULL;
  if (!json_equal(node, json_object_get(r, "node")))
    bad = "Node executable";
  else if (!json_equal(bwrap, json_object_get(r, "bwrap")))
    bad = "Bubblewrap executable";
  else if (!json_equal(objs, json_object_get(r, "sharedObjects")))
    bad = "shared-object set";
  else if (!json_equal(json_object_get(mine, "mountNamespace"), json_object_get(r, "mountNamespace")))
    bad = "mount namespace";
  else if (!json_equal(json_object_get(mine, "root"), json_object_get(r, "root")))
    bad = "root";
  else if (!json_equal(json_object_get(mine, "uid"), json_object_get(r, "uid")) ||
           !json_equal(json_object_get(mine, "gid"), json_object_get(r, "gid")))
    bad = "uid/gid";
  json_decref(node);
  json_decref(bwrap);
  json_decref(objs);
  if (bad) return mismatch(err, bad);
  if (!json_is_string(json_object_get(r, "nodeVersion")))
    return cap_fail(err, CAP_E_ATTEST_OUTPUT_INVALID, "world report lacks nodeVersion");
  return CAP_OK;
}

static bool mounted_dest(const runtime_view *node, const char *path) {
  if (strcmp(path, LAUNCH_NODE_DEST) == 0) return true;
  for (size_t i = 0; i < node->object_count; i++)
    if (strcmp(node->objects[i].dest, path) == 0) return true;
  return false;
}

cap_code attest_report_check_cell(const runtime_view *node, const char *node_version, bool snapshot_mounted,
                                  const json_t *r, const char *challenge, cap_error *err) {
  static const char *const keys[] = {
      "type", "challenge", "version",         "execPath",         "sharedObjects", "pid",
      "uid",  "gid",       "permissionModel", "permissionScopes", "snapshot",      NULL};
  if (!sj_keys(r, keys, keys, CAP_E_ATTEST_OUTPUT_INVALID, "cell report", err)) return err->code;
  const char *got = json_string_value(json_object_get(r, "challenge"));
  if (!got || strcmp(got, challenge) != 0)
    return cap_fail(err, CAP_E_ATTEST_CHALLENGE_MISMATCH, "cell probe did not echo the challenge");
  const char *version = json_string_value(json_object_get(r, "version"));
  if (!version || strcmp(version, node_version) != 0)
    return cap_fail(err, CAP_E_ATTEST_WORLD_MISMATCH, "cell runs Node %s, host resolved %s",
                    version ? version : "?", node_version);
  const char *exec = json_string_value(json_object_get(r, "execPath"));
  if (!exec || strcmp(exec, LAUNCH_NODE_DEST) != 0)
    return cap_fail(err, CAP_E_ATTEST_WORLD_MISMATCH, "cell Node is not %s", LAUNCH_NODE_DEST);
  json_t *objs = json_object_get(r, "sharedObjects"), *o;
  size_t i;
  if (!json_is_array(objs))
    return cap_fail(err, CAP_E_ATTEST_OUTPUT_INVALID, "cell report lacks sharedObjects");
  json_array_foreach(objs, i, o) {
    const char *p = json_string_value(o);
    if (!p) return cap_fail(err, CAP_E_ATTEST_OUTPUT_INVALID, "bad sharedObjects entry");
    if (p[0] != '/') continue; /* linux-vdso.so.1 has no file */
    if (!mounted_dest(node, p))
      return cap_fail(err, CAP_E_ATTEST_WORLD_MISMATCH,
                      "cell loaded %s, which is not a mounted runtime object", p);
  }
  /* The loader must run from the snapshot exactly when the host mounted one. */
  const json_t *snap = json_object_get(r, "snapshot");
  if (!json_is_boolean(snap) || json_is_true(snap) != snapshot_mounted)
    return cap_fail(err, CAP_E_ATTEST_WORLD_MISMATCH, "cell %s the startup snapshot the host %s",
                    json_is_true(snap) ? "runs from" : "does not run from",
                    snapshot_mounted ? "mounted" : "did not mount");
  if (!json_is_true(json_object_get(r, "permissionModel")))
    return cap_fail(err, CAP_E_ATTEST_WORLD_MISMATCH, "Node permission model is not active in the cell");
  /* The scopes the threat model's L9 names must be refused; the others
   * (net: Node 26 only) are recorded as this line answers them. */
  const json_t *scopes = json_object_get(r, "permissionScopes");
  static const char *const required[] = {"fs.read", "fs.write", "child", "worker", NULL};
  if (!json_is_object(scopes) || json_object_size(scopes) > 16)
    return cap_fail(err, CAP_E_ATTEST_OUTPUT_INVALID, "cell report lacks permissionScopes");
  const char *scope;
  json_t *v;
  json_object_foreach((json_t *)scopes, scope, v) if (!json_is_string(v)) return cap_fail(
      err, CAP_E_ATTEST_OUTPUT_INVALID, "bad permissionScopes entry");
  for (size_t k = 0; required[k]; k++) {
    const char *answer = json_string_value(json_object_get(scopes, required[k]));
    if (!answer || strcmp(answer, "denied") != 0)
      return cap_fail(err, CAP_E_ATTEST_WORLD_MISMATCH,
                      "the cell's Node permission model does not "
                      "refuse %s (%.80s)",
                      required[k], answer ? answer : "not reported");
  }
  return CAP_OK;
}
