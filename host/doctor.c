#include "doctor.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "admit/staging.h"
#include "attest/attest.h"
#include "attest/bwrap_diagnosis.h"
#include "attest/snapshot.h"
#include "clock.h"
#include "host_state.h"
#include "kernel_abi.h"
#include "node_version.h"
#include "runtime_scan.h"
#include "subproc.h"

#define FIX_INSTALL_BWRAP "sudo apt-get install --yes bubblewrap"
#define FIX_NODE                           \
  "install Node.js " NODE_MIN_VERSION_TEXT \
  " or newer (Debian's and Ubuntu's nodejs 18 lack the permission model)"

typedef struct {
  json_t *checks;
  bool ok;
} report;

static void add(report *r, const char *check, cap_code code, const char *detail, const char *fix) {
  json_t *c = json_pack("{s:s,s:b,s:s}", "check", check, "ok", code == CAP_OK, "detail", detail);
  if (code != CAP_OK) {
    json_object_set_new(c, "code", json_string(cap_code_name(code)));
    if (fix) json_object_set_new(c, "fix", json_string(fix));
    r->ok = false;
  }
  json_array_append_new(r->checks, c);
  fprintf(stderr, "capsule-host doctor: %-16s %s%s\n", check, code == CAP_OK ? "ok: " : "FAIL: ", detail);
  if (code != CAP_OK && fix) fprintf(stderr, "    fix: %s\n", fix);
}

/* A supported Node past its end of life still runs cells, but no security
 * fix reaches it: the node check says so (a warning, not a failure). */
static void warn_end_of_life(report *r, node_version v) {
  const char *eol = node_end_of_life(v);
  char today[16];
  time_t now = time(NULL);
  struct tm tm;
  if (!eol || !gmtime_r(&now, &tm) || !strftime(today, sizeof today, "%Y-%m-%d", &tm) ||
      strcmp(today, eol) <= 0)
    return;
  char text[200];
  snprintf(text, sizeof text,
           "Node %d reached end of life on %s: no security fix reaches it; "
           "install Node 24 or 26 (cells run the node on PATH)",
           v.major, eol);
  json_object_set_new(json_array_get(r->checks, json_array_size(r->checks) - 1), "warning",
                      json_string(text));
  fprintf(stderr, "    warning: %s\n", text);
}

static int read_sysctl(const char *path) {
  FILE *f = fopen(path, "r");
  int v = -1;
  if (f) {
    if (fscanf(f, "%d", &v) != 1) v = -1;
    fclose(f);
  }
  return v;
}

/* Runs bwrap with args and an empty environment (fd 3 is /dev/null for
 * the --ro-bind-fd probe) and keeps what it said on stderr in said. CAP_OK
 * when it ran to its end, *status its wait status; otherwise the code,
 * and said says why it did not. */
static cap_code run_bwrap(const char *bwrap, char *const *args, int *status, char *said, size_t cap) {
  said[0] = '\0';
  cap_error why = {0};
  int probe_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (probe_fd < 0) {
    snprintf(said, cap, "cannot open /dev/null: %s", strerror(errno));
    return CAP_E_INTERNAL;
  }
  char *argv[32];
  size_t n = 0;
  argv[n++] = (char *)bwrap;
  for (size_t i = 1; args[i] && n + 1 < sizeof argv / sizeof argv[0]; i++) argv[n++] = args[i];
  argv[n] = NULL;
  char *out = NULL;
  size_t len = 0;
  subproc_result rc = subproc_run(argv, (subproc_options){.capture_fd = 2, .fd3 = probe_fd}, 10000, cap - 1,
                                  &out, &len, status, &why);
  close(probe_fd);
  if (rc != SUBPROC_DONE) {
    snprintf(said, cap, "%s", why.message);
    return why.code;
  }
  snprintf(said, cap, "%s", out);
  free(out);
  return CAP_OK;
}

static void diagnose_bwrap(report *r, const char *check, const char *stderr_text) {
  char detail[800];
  bwrap_diagnosis d = bwrap_diagnosis_of(stderr_text);
  snprintf(detail, sizeof detail, "%s; bwrap said: %.600s", d.cause ? d.cause : "bwrap failed", stderr_text);
  for (char *p = detail; *p; p++)
    if (*p == '\n') *p = ' ';
  /* Anything unrecognised is reported as a bwrap that cannot do what cells need. */
  add(r, check, d.code ? d.code : CAP_E_BWRAP_FEATURE_MISSING, detail, d.fix ? d.fix : FIX_NEWER_BWRAP);
}

/* bwrap on PATH, then a preflight and --ro-bind-fd through it.
 * These argvs are deliberately not cells (launcher/bwrap_argv.c is the one
 * place that says what a cell is): each runs the host's /bin/true over the
 * host's root read-only, to learn whether this kernel and this bwrap can
 * make the namespaces and the descriptor mount a cell needs. No guest
 * code, no launcher, no seccomp: a failure here must name bwrap or the
 * kernel, not this host's own layers (attest, which doctor runs after,
 * starts a real cell). */
static void check_bubblewrap(report *r, const host *h) {
  cap_error err = {0};
  file_identity bw;
  bool have_bwrap =
      runtime_which(h->cfg.bubblewrap_command, getenv("PATH"), &bw, CAP_E_BWRAP_NOT_FOUND, &err) == CAP_OK;
  add(r, "bubblewrap", have_bwrap ? CAP_OK : err.code, have_bwrap ? bw.path : err.message, FIX_INSTALL_BWRAP);
  if (!have_bwrap) return;
  char out[4096];
  char *preflight[] = {"bwrap",
                       "--die-with-parent",
                       "--new-session",
                       "--unshare-all",
                       "--unshare-user",
                       "--disable-userns",
                       "--cap-drop",
                       "ALL",
                       "--ro-bind",
                       "/",
                       "/",
                       "/bin/true",
                       NULL};
  int st = -1;
  if (!run_bwrap(bw.path, preflight, &st, out, sizeof out) && st == 0)
    add(r, "bwrap-preflight", CAP_OK, "bwrap made fresh namespaces with --disable-userns and --cap-drop ALL",
        NULL);
  else
    diagnose_bwrap(r, "bwrap-preflight", out);
  char *fd_probe[] = {"bwrap",   "--unshare-all", "--unshare-user", "--ro-bind", "/",          "/",
                      "--tmpfs", "/tmp",          "--ro-bind-fd",   "3",         "/tmp/probe", "/bin/true",
                      NULL};
  if (!run_bwrap(bw.path, fd_probe, &st, out, sizeof out) && st == 0)
    add(r, "bwrap-ro-bind-fd", CAP_OK, "--ro-bind-fd works", NULL);
  else
    diagnose_bwrap(r, "bwrap-ro-bind-fd", out);
}

static void check_userns_sysctls(report *r) {
  bool root = geteuid() == 0;
  int clone = read_sysctl("/proc/sys/kernel/unprivileged_userns_clone");
  int max_ns = read_sysctl("/proc/sys/user/max_user_namespaces");
  int apparmor = read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
  char detail[256];
  snprintf(detail, sizeof detail,
           "kernel.unprivileged_userns_clone=%d user.max_user_namespaces=%d "
           "kernel.apparmor_restrict_unprivileged_userns=%d (-1: absent)",
           clone, max_ns, apparmor);
  cap_code sys = (!root && clone == 0) || max_ns == 0 ? CAP_E_USERNS_RESTRICTED : CAP_OK;
  add(r, "userns-sysctl", sys, detail, max_ns == 0 ? FIX_SYSCTL_MAX : FIX_SYSCTL_CLONE);
}

/* node on PATH, a supported line, and its end of life. */
static void check_node(report *r) {
  cap_error err = {0};
  file_identity node;
  if (runtime_which("node", getenv("PATH"), &node, CAP_E_RUNTIME_NOT_FOUND, &err) != CAP_OK) {
    add(r, "node", err.code, err.message, FIX_NODE);
    return;
  }
  char *argv[] = {node.path, "--version", NULL}, *out = NULL, detail[256];
  size_t len = 0;
  int status = 0;
  node_version v;
  bool ran = subproc_run(argv, SUBPROC_STDOUT, 5000, 256, &out, &len, &status, NULL) == SUBPROC_DONE;
  bool ok = ran && node_version_parse(out, &v) && node_version_supported(v);
  snprintf(detail, sizeof detail, "%s %.*s", node.path, ran ? (int)strcspn(out, "\n") : 0, ran ? out : "");
  add(r, "node", ok ? CAP_OK : CAP_E_RUNTIME_UNSUPPORTED, detail, FIX_NODE);
  if (ok) warn_end_of_life(r, v);
  free(out);
}

/* Informational: the ceilings' mechanisms, and which legacy syscall entries
 * the kernel has. */
static void check_ceilings_and_kernel_abi(report *r, const host *h) {
  /* Ceilings use only what every kernel gives every user (rlimits, seccomp):
   * nothing to install, and no cgroup is ever needed or touched. */
  char detail[512];
  snprintf(detail, sizeof detail,
           "rlimits (memory RLIMIT_DATA %lld MiB, cpu %lld s, file %lld bytes, %lld open files) "
           "and seccomp (one process per cell): available for root and plain users",
           h->cfg.limits.max_cell_memory_mb, h->cfg.limits.max_cell_cpu_seconds,
           h->cfg.limits.max_cell_file_bytes, h->cfg.limits.max_cell_open_files);
  add(r, "cell-ceilings", CAP_OK, detail, NULL);
  /* The seccomp filter denies both entries; where the kernel has none, those
   * attacks are impossible outright (and the corpus's hazard cases accept
   * "unavailable"). */
  json_t *abi = kernel_abi_json();
  snprintf(detail, sizeof detail, "i386 entry (int $0x80): %s; x32 entry: %s",
           json_string_value(json_object_get(abi, "i386")), json_string_value(json_object_get(abi, "x32")));
  json_decref(abi);
  add(r, "kernel-abi", CAP_OK, detail, NULL);
}

/* The execution-world attestation, then what `serve` will do after
 * activation (the startup snapshot), done here to say whether it can. */
static void check_attestation_and_snapshot(report *r, host *h) {
  cap_error err = {0};
  cap_code a = attest_run(h, &err);
  add(r, "attestation", a, a == CAP_OK ? "execution-world attestation passed" : err.message,
      a == CAP_OK ? NULL : "see docs/ERRORS.md for this code");
  if (a != CAP_OK || staging_reserve(&h->stg, SNAPSHOT_BUILDING_NAME, &err)) return;
  json_t *snap = NULL;
  char detail[512];
  memset(&err, 0, sizeof err);
  cap_code built = snapshot_job(h, &snap, &err);
  if (built == CAP_OK)
    snprintf(detail, sizeof detail,
             "startup snapshot built in %lld ms and a cell ran from it "
             "(sha256 %s)",
             (long long)json_integer_value(json_object_get(snap, "buildMs")),
             json_string_value(json_object_get(snap, "sha256")));
  else
    snprintf(detail, sizeof detail,
             "no startup snapshot: serve's cells will run without "
             "it, about 15 ms slower each: %s",
             err.message);
  add(r, "startup-snapshot", built, detail, "see docs/ERRORS.md for this code");
  json_decref(snap);
}

int doctor_run(host *h) {
  report r = {json_array(), true};
  check_bubblewrap(&r, h);
  check_userns_sysctls(&r);
  check_node(&r);
  check_ceilings_and_kernel_abi(&r, h);
  if (r.ok) check_attestation_and_snapshot(&r, h);
  /* One JSON document, one check a line: it fits a screen. */
  printf("{\"ok\": %s, \"checks\": [\n", r.ok ? "true" : "false");
  size_t i;
  json_t *c;
  json_array_foreach(r.checks, i, c) {
    char *line = json_dumps(c, JSON_COMPACT | JSON_ENSURE_ASCII);
    printf("  %s%s\n", line ? line : "{\"check\": \"?\", \"ok\": false}",
           i + 1 < json_array_size(r.checks) ? "," : "");
    free(line);
  }
  puts("]}");
  json_decref(r.checks);
  return r.ok ? 0 : 1;
}
