#include "snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admit/staging.h"
#include "attest.h"
#include "cell/cell.h"
#include "cell/cell_orphans.h"
#include "clock.h"
#include "digest.h"
#include "host_state.h"
#include "launch_contract.h"
#include "safe_open.h"
#include "subproc.h"

#define SNAPSHOT_MAX_BYTES (256u << 20)
#define SNAPSHOT_BUILD_TIMEOUT_MS 60000

/* Where the build sees its files: the cells' own paths, so that no host
 * path (the staging directory, $TMPDIR, node's install path) can end up in
 * the heap the snapshot keeps and every cell started from it can read. */
#define BUILD_OUT_DIR "/tmp/.capsule/out"
#define BUILD_OUT BUILD_OUT_DIR "/" SNAPSHOT_BUILDING_NAME

/* The deliberate other sandbox (not a cell; launcher/bwrap_argv.c is the
 * one place that says what a cell is): bwrap [a cell's namespaces, no
 * capabilities, a new session, death with its parent, an empty
 * environment; node and its shared objects and the loader at their cell
 * paths; the staging directory writable at BUILD_OUT_DIR] /runtime/node
 * --snapshot-blob BUILD_OUT --build-snapshot [--max-old-space-size=N]
 * <loader>. Why it differs from a cell: it runs host code only (Node and
 * the loader this host ships, no guest byte), so it needs none of the
 * defences a cell holds against its guest (the seccomp filter, the
 * permission model and its read grants, descriptor-bound mounts checked by
 * the launcher); and it needs what a cell must never have, one writable
 * host directory to leave the blob in, which is read back bounded and
 * digested before any cell uses it (snapshot_adopt). */
static cap_code build_blob(host *h, cap_error *err) {
  char heap[64];
  snprintf(heap, sizeof heap, "--max-old-space-size=%lld", h->cfg.limits.max_old_space_size_mb);
  char *fixed_head[] = {h->bwrap.path,    "--unshare-all",
                        "--unshare-user", "--die-with-parent",
                        "--new-session",  "--clearenv",
                        "--cap-drop",     "ALL",
                        "--proc",         "/proc",
                        "--dev",          "/dev",
                        "--tmpfs",        "/tmp",
                        "--dir",          "/tmp/.capsule",
                        "--ro-bind",      h->node.executable.path,
                        LAUNCH_NODE_DEST};
  char *fixed_tail[] = {"--ro-bind",
                        h->loader.path,
                        LAUNCH_LOADER_DEST,
                        "--bind",
                        h->stg.dir,
                        BUILD_OUT_DIR,
                        "--chdir",
                        "/tmp",
                        "--",
                        LAUNCH_NODE_DEST,
                        "--snapshot-blob",
                        BUILD_OUT,
                        "--build-snapshot",
                        heap,
                        LAUNCH_LOADER_DEST};
  size_t nhead = sizeof fixed_head / sizeof *fixed_head, ntail = sizeof fixed_tail / sizeof *fixed_tail;
  char **argv = calloc(nhead + 3 * h->node.object_count + ntail + 1, sizeof *argv);
  if (!argv) return cap_fail(err, CAP_E_INTERNAL, "out of memory");
  size_t n = 0;
  for (size_t i = 0; i < nhead; i++) argv[n++] = fixed_head[i];
  for (size_t i = 0; i < h->node.object_count; i++) {
    argv[n++] = "--ro-bind";
    argv[n++] = h->node.objects[i].source.path;
    argv[n++] = h->node.objects[i].dest;
  }
  for (size_t i = 0; i < ntail; i++)
    if (fixed_tail[i] != heap || h->cfg.limits.max_old_space_size_mb > 0) argv[n++] = fixed_tail[i];
  char *text = NULL;
  size_t len = 0;
  int status = 0;
  /* The host's death (the supervisor's SIGTERM) ends the build at once:
   * its cells must be gone within the host's death bound. */
  subproc_options opt = {.capture_fd = 2, .fd3 = -1, .cancel = &cell_cancel_requested};
  cap_error why = {0};
  cell_orphans_adopt();
  subproc_result r = subproc_run(argv, opt, SNAPSHOT_BUILD_TIMEOUT_MS, 65536, &text, &len, &status, &why);
  free(argv);
  /* bwrap killed before its sandbox armed its parent-death signal leaves
   * that sandbox's init to us (cell_orphans.c). */
  if (r != SUBPROC_DONE) cell_orphans_end(CELL_JOIN_HARD_LIMIT_MS);
  cap_code rc = CAP_OK;
  if (r != SUBPROC_DONE)
    rc = cap_fail(err, why.code, "node --build-snapshot did not run to its end: %s", why.message);
  else if (status != 0)
    rc = cap_fail(err, CAP_E_LAUNCH_FAILED, "node --build-snapshot failed (status 0x%x): %.300s",
                  (unsigned)status, text ? text : "");
  free(text);
  return rc;
}

/* The blob as the host staged it: read once, hashed, written again as a
 * fresh 0400 file (the built file itself was writable by node). */
static cap_code stage_blob(host *h, cap_error *err) {
  struct stat st;
  int fd = so_open_regular(h->stg.dirfd, SNAPSHOT_BUILDING_NAME, &st);
  if (fd < 0) return cap_fail(err, CAP_E_LAUNCH_FAILED, "node wrote no snapshot");
  char *buf = NULL;
  size_t len = 0;
  so_read_result r = so_read_bounded(fd, SNAPSHOT_MAX_BYTES, &buf, &len);
  close(fd);
  unlinkat(h->stg.dirfd, SNAPSHOT_BUILDING_NAME, 0);
  if (r != SO_READ_OK) {
    free(buf);
    return cap_fail(err, CAP_E_LAUNCH_FAILED, "cannot read the built snapshot (%s)",
                    r == SO_READ_TOO_LARGE ? "too large" : strerror(errno));
  }
  cap_code rc = staging_add(&h->stg, SNAPSHOT_NAME, buf, len, &h->snapshot, err);
  free(buf);
  return rc;
}

/* A cell that runs from the snapshot must pass the cell probe, and say
 * that it runs from it (attest_report.c checks "snapshot"). */
static cap_code verify_in_cell(host *h, cap_error *err) {
  /* The check fills a report of its own; the published one stays. */
  json_t *report = json_object();
  if (!report) return cap_fail(err, CAP_E_INTERNAL, "out of memory");
  cap_code rc = attest_only_cell_report(h, report, err);
  json_decref(report);
  return rc;
}

cap_code snapshot_job(host *h, json_t **built, cap_error *err) {
  *built = NULL;
  long long t0 = mono_ms();
  cap_code rc = build_blob(h, err);
  if (!rc) rc = stage_blob(h, err);
  /* The host died or is shutting down: no new cell for a blob nobody uses. */
  if (!rc && cell_cancel_requested)
    rc = cap_fail(err, CAP_E_CALL_CANCELLED, "the snapshot job was cancelled before its check");
  long long t1 = mono_ms();
  if (!rc) rc = verify_in_cell(h, err);
  if (rc) return rc;
  *built =
      json_pack("{s:s,s:I,s:I,s:s,s:I,s:I}", "path", h->snapshot.path, "dev", (json_int_t)h->snapshot.dev,
                "ino", (json_int_t)h->snapshot.ino, "sha256", h->snapshot.sha256, "buildMs",
                (json_int_t)(t1 - t0), "verifyMs", (json_int_t)(mono_ms() - t1));
  return *built ? CAP_OK : cap_fail(err, CAP_E_INTERNAL, "out of memory");
}

static void report_state(host *h, json_t *state) {
  if (h->attestation)
    json_object_set_new(h->attestation, "startupSnapshot", state);
  else
    json_decref(state);
}

cap_code snapshot_adopt(host *h, const snapshot_outcome *job, cap_error *err) {
  cap_code rc = job->code;
  const json_t *snap = job->snapshot;
  const char *path = json_string_value(json_object_get(snap, "path"));
  const char *sha = json_string_value(json_object_get(snap, "sha256"));
  if (rc) {
    cap_fail(err, rc, "%s", job->message);
  } else if (!path || !sha) {
    rc = cap_fail(err, CAP_E_INTERNAL, "snapshot job verdict without path or digest");
  }
  char expected[4200];
  if (!rc) snprintf(expected, sizeof expected, "%s/%s", h->stg.dir, SNAPSHOT_NAME);
  if (!rc && strcmp(path, expected) != 0)
    rc = cap_fail(err, CAP_E_INTERNAL, "snapshot job staged %s, not %s", path, expected);
  struct stat st;
  int fd = rc ? -1 : so_open_regular(h->stg.dirfd, SNAPSHOT_NAME, &st);
  char hex[SHA256_HEX_LEN + 1];
  if (!rc && (fd < 0 || (json_int_t)st.st_dev != json_integer_value(json_object_get(snap, "dev")) ||
              (json_int_t)st.st_ino != json_integer_value(json_object_get(snap, "ino")) ||
              !digest_sha256_fd_hex(fd, SNAPSHOT_MAX_BYTES, hex) || strcmp(hex, sha) != 0))
    rc = cap_fail(err, CAP_E_LAUNCH_SOURCE_MISMATCH,
                  "the staged snapshot is not the blob the job built and verified");
  if (fd >= 0) close(fd);
  if (rc) {
    report_state(h, json_pack("{s:s,s:s,s:s}", "state", "unavailable", "code", cap_code_name(err->code),
                              "message", err->message));
    return rc;
  }
  snprintf(h->snapshot.path, sizeof h->snapshot.path, "%s", path);
  h->snapshot.dev = (unsigned long long)st.st_dev;
  h->snapshot.ino = (unsigned long long)st.st_ino;
  snprintf(h->snapshot.sha256, sizeof h->snapshot.sha256, "%s", sha);
  report_state(h, json_pack("{s:s,s:s,s:I,s:O,s:O}", "state", "in use", "sha256", sha, "bytes",
                            (json_int_t)st.st_size, "buildMs", json_object_get(snap, "buildMs"), "verifyMs",
                            json_object_get(snap, "verifyMs")));
  return CAP_OK;
}
