#!/usr/bin/env python3
"""Mutation proof for every defence: for each fix, copy the tree, revert
just that fix, rebuild, and require that the cases guarding it now FAIL
(and pass on the unmodified tree). A case is a corpus id (family/name) or a
pytest node id (file::test). Prints a table; exits 1 if any case survives
its fix's removal. Run: make prove-fixes"""
import concurrent.futures
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from kernel_probe import i386_entry_faults

REPO = Path(__file__).resolve().parent.parent

# (fix, file, exact text to remove or replace, replacement, guarding cases)
REVERTS = [
    ("empty environment for bwrap", "launcher/launcher_main.c",
     "syscall(SYS_execveat, plan.bwrap_fd, \"\", plan.argv.items, empty_env, AT_EMPTY_PATH);",
     "extern char **environ; (void)empty_env;\n  syscall(SYS_execveat, plan.bwrap_fd, \"\", plan.argv.items, environ, AT_EMPTY_PATH);",
     ["hazards/pid1-environ-empty"]),
    ("launcher closes inherited fds", "launcher/launcher_main.c",
     "  so_close_from(LAUNCHER_FIRST_FREE_FD);\n", "", ["hazards/inherited-fd-closed"]),
    ("S_ISREG on the opened descriptor", "launcher/launch_prepare.c",
     "if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {", "if (fstat(fd, &st) != 0) {",
     ["hazards/workspace-socket-refused"]),
    ("--cap-drop ALL", "launcher/bwrap_argv.c", "\"--cap-drop\", \"ALL\", ", "",
     ["hazards/capabilities-dropped"]),
    ("--new-session", "launcher/bwrap_argv.c", "\"--new-session\",", "",
     ["hazards/no-controlling-tty"]),
    ("TIOCSTI seccomp rule", "common/seccomp_policy.c",
     "SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, TIOCSTI)", "SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, 0x7fff)",
     ["hazards/tiocsti-denied"]),
    ("seccomp filter passed to bwrap", "launcher/bwrap_argv.c",
     "  ok = ok && push(l, \"--seccomp\") && push_num(l, seccomp_fd);\n", "  (void)seccomp_fd;\n",
     ["hazards/seccomp-active", "hazards/tiocsti-denied", "hazards/tioclinux-denied",
      "hazards/io-uring-denied", "hazards/i386-abi-denied", "hazards/x32-abi-denied",
      "hazards/unshare-userns-denied", "hazards/clone-userns-denied", "hazards/fsopen-denied",
      "hazards/open-tree-denied", "hazards/add-key-denied", "hazards/keyctl-denied",
      "hazards/ptrace-denied", "hazards/perf-event-open-denied", "hazards/bpf-denied"]),
    # Containment closure (resource ceilings, /dev, hostname, host death, serve).
    ("memory ceiling (RLIMIT_DATA)", "launcher/ceilings.c",
     'cap_code rc = lower(RLIMIT_DATA, "RLIMIT_DATA", mem, mem, err);', "cap_code rc = CAP_OK; (void)mem;",
     ["guests/off-heap-buffer-bomb-bounded", "guests/wasm-memory-bomb-bounded",
      "hazards/native-memory-bounded", "hazards/threads-bounded", "hazards/rlimits-in-force"]),
    ("CPU ceiling (RLIMIT_CPU)", "launcher/ceilings.c",
     'if (!rc) rc = lower(RLIMIT_CPU, "RLIMIT_CPU", cpu, cpu + 1, err);', "(void)cpu;",
     ["cells/cpu-ceiling", "cells/cpu-ceiling-sigxcpu-handled"]),
    ("file-size ceiling (RLIMIT_FSIZE)", "launcher/ceilings.c",
     'if (!rc) rc = lower(RLIMIT_FSIZE, "RLIMIT_FSIZE", fsize, fsize, err);', "(void)fsize;",
     ["guests/file-size-bounded"]),
    ("open-files ceiling (RLIMIT_NOFILE)", "launcher/ceilings.c",
     'if (!rc) rc = lower(RLIMIT_NOFILE, "RLIMIT_NOFILE", nofile, nofile, err);', "(void)nofile;",
     ["guests/open-files-bounded"]),
    ("ceiling exits reported as CELL_RESOURCE_LIMIT", "host/cell/cell_io.c",
     "  if (cell_ceiling_failure(c, tail, err)) return err->code;\n  if (lost_a_source(",
     "  if (lost_a_source(", ["cells/heap-bomb", "cells/cpu-ceiling"]),
    ("one process per cell (seccomp fork/vfork/clone)", "common/seccomp_policy.c",
     "  rc = rc ? rc : seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(fork), 0);\n"
     "  rc = rc ? rc : seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(vfork), 0);\n"
     "  rc = rc ? rc : seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,\n"
     "                                  SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));\n", "",
     ["hazards/process-creation-denied"]),
    ("/dev remounted read-only", "launcher/bwrap_argv.c",
     '  ok = ok && push(l, "--remount-ro") && push(l, "/dev");\n', "",
     ["hazards/dev-read-only", "guests/dev-not-writable"]),
    ("neutral hostname", "launcher/bwrap_argv.c", '"--hostname", LAUNCH_CELL_HOSTNAME,', "",
     ["hazards/hostname-neutral", "guests/hostname-neutral"]),
    ("supervisor ends with the host (PR_SET_PDEATHSIG)", "host/call/supervisor.c",
     "if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent) _exit(1);", "(void)parent;",
     ["pytest/test_containment.py::test_cells_and_supervisors_die_with_a_sigkilled_serve"]),
    ("dead hosts' staging swept at start", "host/admit/staging.c", "  staging_sweep(base);\n", "",
     ["pytest/test_containment.py::test_cells_and_supervisors_die_with_a_sigkilled_serve",
      "pytest/test_containment.py::test_cells_die_with_a_sigkilled_one_shot_call"]),
    ("sweep spares a live host (owner lock)", "host/admit/staging.c",
     "flock(lock, LOCK_EX | LOCK_NB) == 0 && ", "",
     ["pytest/test_containment.py::test_sweep_never_touches_a_live_hosts_staging"]),
    ("serve writes stdout without blocking", "host/serve/serve.c",
     "fcntl(1, F_SETFL, fcntl(1, F_GETFL) | O_NONBLOCK);", "",
     ["pytest/test_containment.py::test_sigterm_with_a_client_that_never_reads"]),
    ("serve reaps the bwrap it adopts, per call (issue 32)", "host/serve/serve.c",
     "  reap_adopted(s);\n", "  (void)reap_adopted;\n",
     ["pytest/test_serve.py::test_serve_keeps_no_zombie_and_no_extra_child_per_call"]),
    ("a sandbox whose bwrap ended before --info-fd named it is ended by its subreaper", "host/cell/cell_end.c",
     "    cell_orphans_end(CELL_JOIN_HARD_LIMIT_MS);\n", "    (void)cell_orphans_end;\n",
     ["pytest/test_containment.py::test_a_bwrap_ended_between_its_clone_and_its_report_leaves_no_sandbox"]),
    ("an unread stderr never stalls serve (issue 36.9)", "host/serve/serve.c",
     "  serve_log_open(); /* before the first line", "  (void)serve_log_open; /* before the first line",
     ["pytest/test_serve.py::test_an_unread_stderr_never_stalls_serve"]),
    ("the keyid is the SSH fingerprint Go verifiers match (issue 34)", "host/attest/signing_key.c",
     "  ok = ok && ssh_fingerprint(key);\n", "  ok = ok && ssh_fingerprint(key);\n  snprintf(key->keyid, sizeof key->keyid, \"%s\", key->der_sha256);\n",
     ["pytest/test_attestations.py::test_keyid_is_the_ssh_fingerprint_go_verifiers_match"]),
    ("verify fails on a FAILED summary (issue 34)", "host/verify.c",
     "  if (!rc) rc = summary_passed(statement, err);\n", "  (void)summary_passed;\n",
     ["verify/summary-failed",
      "pytest/test_attestations.py::test_verify_exits_non_zero_on_a_summary_of_a_refused_capsule[describe-limit]"]),
    ("verify refuses a summary of another verifier (issue 34)", "host/attest/statement.c",
     "  if (!verifier || strcmp(verifier, VSA_VERIFIER_ID) != 0)\n", "  if (0)\n",
     ["verify/summary-of-another-verifier"]),
    ("pack writes beside -o and renames, never through a link (issue 36)", "host/admit/bundle.c",
     "  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);",
     "  snprintf(tmp, sizeof tmp, \"%s\", out_path);\n  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);",
     ["bundle/pack-output-is-a-planted-symlink"]),
    ("verify --config holds a summary to its own config (issue 36)", "host/verify.c",
     "  if (got && strcmp(got, h->cfg.sha256) == 0) return CAP_OK;", "  if (1) return CAP_OK;",
     ["verify/summary-policy-drift"]),
    ("queued calls expire (queueTimeoutMs)", "host/serve/serve.c",
     "int timeout = scheduler_expire(&s), warm_due", "(void)scheduler_expire; int timeout = -1, warm_due",
     ["serve/queue-timeout", "pytest/test_containment.py::test_queued_call_times_out_on_time"]),
    ("re-encoded verdict checked in the supervisor", "host/call/supervisor.c",
     "if (got > limit) {", "if (got > limit && 0) {",
     ["serve/result-reencodes-past-limit"]),
    ("absolute mount destinations (no '--' option injection)", "common/launch_doc.c",
     "  return so_is_plain_absolute(dest);\n}", "  return dest[0] != '\\0';\n}",
     ["launch/runtime-dest-option"]),
    # MCP serve: answers a client can match, no ambiguous ids.
    ("a call id in flight is not reused", "host/serve/mcp.c",
     "if (scheduler_in_flight(s, r->id))", "if (0 && scheduler_in_flight(s, r->id))",
     ["pytest/test_mcp_protocol.py::test_reused_id_of_a_call_in_flight_is_refused_and_cancel_hits_the_first"]),
    ("JSON the strict parser refuses is answered under its id", "host/serve/mcp.c",
     "json_t *id = jsonrpc_id_recover(line, len, sj_parse_budget(len, lim));",
     "json_t *id = NULL;\n  (void)line, (void)len, (void)lim;\n  (void)jsonrpc_id_recover;",
     ["pytest/test_mcp_protocol.py::test_nul_in_a_string_is_answered_under_its_id",
      "pytest/test_mcp_protocol.py::test_refused_valid_json_is_answered_under_its_id"]),
    ("an unknown cursor is invalid params", "host/serve/mcp.c",
     "if (!json_object_get(r->params, \"cursor\")) return false;", "return false;",
     ["pytest/test_mcp_protocol.py::test_unknown_cursor_is_invalid_params"]),
    # The DSH row (dsh/*.mjs): registration before DSH's first turn, contained failures.
    ("DSH row registers inside apply (DSH waits for it)", "dsh/index.mjs",
     "export async function apply(ctx, config = {}) {",
     "export function apply(ctx, config = {}) {\n  void activate(ctx, config);\n}\n\nasync function activate(ctx, config = {}) {",
     ["pytest/test_dsh.py::test_row_registers_tools_and_sections_and_calls_through_cells"]),
    ("DSH row checks the host before spawning", "dsh/index.mjs",
     "host = resolveHostCommand(hostCommand);", "host = hostCommand;",
     ["pytest/test_dsh.py::test_missing_host_registers_nothing_and_never_rejects"]),
    ("DSH row bounds activation (activationTimeoutMs)", "dsh/index.mjs",
     "published = await Promise.race([readPublication(peer), limit.promise]);",
     "published = await readPublication(peer);",
     ["pytest/test_dsh.py::test_host_that_publishes_nothing_times_out"]),
    ("DSH row withdraws everything when the host dies", "dsh/index.mjs",
     "    if (disposed) return;\n    withdraw();\n", "    if (disposed) return;\n",
     ["pytest/test_dsh.py::test_host_that_dies_later_withdraws_everything"]),
    ("DSH row registers all or nothing", "dsh/index.mjs",
     "  } catch (error) {\n    withdraw();\n    await stopHost();\n", "  } catch (error) {\n    await stopHost();\n",
     ["pytest/test_dsh.py::test_tool_name_dsh_already_has_registers_nothing"]),
    # MCP: a cancelled call is finished for the client, so its id is free at once.
    ("a cancelled call's id is free at once", "host/serve/scheduler.c",
     "if (!s->slots[i].cancelled && json_equal(s->slots[i].id, id)) return true;",
     "if (json_equal(s->slots[i].id, id)) return true;",
     ["pytest/test_mcp_protocol.py::test_id_of_a_cancelled_call_is_free_at_once"]),
    # A bundle entry is bounded while it inflates, not only by its header (issue 17).
    ("bundle entry bounded while it inflates", "host/admit/bundle.c",
     "if (len + (size_t)n > limit) {", "if (false) {",
     ["bundle/sparse-inflates-past-declared-size"]),
    # The cell loader, warm cells and the startup snapshot (issue 15).
    ("launcher rehashes the loader and the snapshot, not only the guest", "launcher/launch_prepare.c",
     "if (fd >= 0 && m->sha256 && !digest_matches(", "if (fd >= 0 && m->label == LD_GUEST && !digest_matches(",
     ["launch/loader-bytes-changed", "serve/snapshot-tampered"]),
    ("every launch document carries the host's loader", "common/launch_doc.c",
     "if (guests != 1 || nodes != 1 || loaders != 1) {", "if (guests != 1 || nodes != 1 || loaders > 1) {",
     ["launch/no-loader"]),
    ("loader read under the /tmp grant (no third grant: Node 20 would list /)", "launcher/bwrap_argv.c",
     "  ok = ok && push(l, doc->permission_flag);\n",
     "  ok = ok && push(l, doc->permission_flag) && push_joined(l, \"--allow-fs-read=\", LAUNCH_LOADER_DEST);\n",
     ["guests/list-root"]),
    ("warm cell re-checks the workspace when its call arrives", "host/call/call.c",
     "  if (!rc) rc = workspace_unchanged(cap->cfg->workspace_root, &cap->workspace, err);\n", "",
     ["serve/warm-workspace-replaced-while-waiting"]),
    ("an idle warm cell that dies is noticed before it takes a call", "host/call/warm_cell.c",
     "    if (p[1].revents || p[2].revents) {", "    if (0) {",
     ["serve/warm-cell-killed-while-idle"]),
    ("supervisors close the other warm cells' assignment pipes", "host/call/supervisor.c",
     "  close_all_but(keep, sizeof keep / sizeof keep[0]);\n", "  (void)keep;\n  (void)close_all_but;\n",
     ["serve/warm-shutdown-with-idle-cells"]),
    # Strict JSON as JSONTestSuite sees it (issue 28) and the outside testers' findings (issue 24).
    ("strict parser refuses any NUL byte before jansson reads the text", "common/strict_json.c",
     "  if (nul) {", "  if (0) {",
     ["frames/nul-after-number", "frames/nul-after-literal-in-describe"]),
    ("error messages are made valid, escaped text in one place", "common/cap_error.c",
     "  safe_text(err->message, sizeof err->message, wide, len);",
     "  snprintf(err->message, sizeof err->message, \"%.*s\", (int)len, wide);",
     ["frames/escape-cuts-utf8-in-message"]),
    ("JSON-RPC error messages are made valid text too (what they quote of the client)",
     "host/serve/serve_output.c", "  safe_text(clean, sizeof clean, message, strlen(message));",
     "  snprintf(clean, sizeof clean, \"%s\", message);",
     ["pytest/test_mcp_protocol.py::test_an_unknown_tool_name_cut_mid_character_is_quoted_as_text"]),
    ("the parse runs under a budget derived from the node limit", "common/strict_json.c",
     "  budget.on = true;", "  budget.on = false;",
     ["frames/flood-of-empty-objects"]),
    ("a call cancelled as its warm cell takes it is answered CALL_CANCELLED", "host/call/warm_cell.c",
     "  if (assigned_bytes == 0 && !assignment_waiting(fd)) return WAIT_RECYCLE;",
     "  (void)assigned_bytes, (void)fd;\n  return WAIT_RECYCLE;",
     ["pytest/test_serve.py::test_a_call_assigned_as_the_cancel_arrives_is_answered_call_cancelled"]),
    ("serve handles no request line while its output is above the high-water mark", "host/serve/serve.c",
     "while (s->in_off < s->in_len && !serve_backlogged(s)) {", "while (s->in_off < s->in_len) {",
     ["pytest/test_serve.py::test_output_queue_is_bounded_against_request_amplification"]),
    ("no progress notification right before the result (SDK v1 onerror)", "host/serve/mcp.c",
     "  serve_send_result(s, c->id, mcp_call_result(job, c->modern));",
     "  if (c->progress_token) send_progress(s, c->progress_token, 2, \"cell finished\");\n"
     "  serve_send_result(s, c->id, mcp_call_result(job, c->modern));",
     ["pytest/test_serve.py::test_official_mcp_sdk_client_lists_and_calls"]),
    ("the startup snapshot is built at the cells' paths, not the host's", "host/attest/snapshot.c",
     "char *fixed_tail[] = {\"--ro-bind\", h->loader.path, LAUNCH_LOADER_DEST, \"--bind\", h->stg.dir,\n"
     "BUILD_OUT_DIR, \"--chdir\", \"/tmp\", \"--\", LAUNCH_NODE_DEST, \"--snapshot-blob\",\n"
     "BUILD_OUT, \"--build-snapshot\", heap, LAUNCH_LOADER_DEST};",
     "char *fixed_tail[] = {\"--ro-bind\", h->loader.path, h->loader.path, \"--bind\", h->stg.dir,\n"
     "BUILD_OUT_DIR, \"--chdir\", \"/tmp\", \"--\", LAUNCH_NODE_DEST, \"--snapshot-blob\",\n"
     "BUILD_OUT, \"--build-snapshot\", heap, h->loader.path};",
     ["pytest/test_serve.py::test_startup_snapshot_holds_no_host_path"]),
    ("each granted workspace inode is held open for the host's life", "host/admit/workspace.c",
     "  *wf = (workspace_file){path, (unsigned long long)st.st_dev, (unsigned long long)st.st_ino, fd};",
     "  close(fd);\n  *wf = (workspace_file){path, (unsigned long long)st.st_dev, (unsigned long long)st.st_ino, -1};",
     ["serve/workspace-inode-recycled"]),
    ("cells may not take the host user's inotify watches (seccomp)", "common/seccomp_policy.c",
     "    \"inotify_init\", \"inotify_init1\", \"fanotify_init\", NULL};", "    NULL};",
     ["hazards/inotify-denied"]),
    ("bundles are inflated by zlib under a bound, libarchive reads plain tar", "host/admit/bundle.c",
     "  if (a) archive_read_support_format_tar(a);",
     "  if (a) archive_read_support_format_tar(a), archive_read_support_filter_gzip(a);",
     ["bundle/gzip-in-gzip"]),
    ("nothing may follow a bundle's tar and gzip stream", "host/admit/bundle.c",
     "  if (!rc) rc = bundle_gunzip_drain(a, g, out->sha256, err);\n", "",
     ["bundle/bytes-after-gzip"]),
    ("bwrap's lost --ro-bind-fd source is LAUNCH_SOURCE_MISMATCH, not CELL_EXITED", "host/cell/cell_io.c",
     "  if (lost_a_source(c, tail, err)) return err->code;\n", "  (void)lost_a_source;\n",
     ["launch/bwrap-source-gone"]),
    ("Node 24's code range is added to the memory ceiling", "common/node_version.c",
     "  return v.major >= 24 ? 512 : 0;", "  (void)v;\n  return 0;",
     ["pytest/test_attack_corpus.py::test_memory_and_dev_cases_on_node_24"]),
    # One reading of a supervisor's verdict (issue 26): before it, the
    # snapshot's and doctor's readers took an unknown code for success.
    ("a verdict naming no documented code is never success", "host/call/verdict.c",
     "  cap_code code = name ? cap_code_from_name(name) : CAP_OK;\n",
     "  cap_code code = name ? cap_code_from_name(name) : CAP_OK;\n"
     "  if (code == CAP_OK && msg) {\n    *out = (verdict_reading){VERDICT_ERROR, CAP_OK, msg, NULL, false};\n"
     "    return CAP_OK;\n  }\n",
     ["pytest/test_unit_boundaries.py::test_unit[verdict]"]),
    # Signed attestations (issue 27): each check of `verify` and of the key.
    ("an envelope carries exactly one signature", "host/attest/dsse.c",
     "if (!json_is_array(sigs) || json_array_size(sigs) != 1)",
     "if (!json_is_array(sigs) || json_array_size(sigs) < 1)",
     ["verify/signature-list-duplicated", "verify/signature-list-reordered"]),
    ("only canonical base64 decodes", "host/attest/dsse.c",
     "bool canonical = again && strcmp(again, text) == 0;", "bool canonical = again != NULL;",
     ["verify/payload-base64-stray-bits"]),
    ("the signature is checked over DSSE's PAE, not the raw payload", "host/attest/dsse.c",
     "bool ok = pae && signing_key_verify(key, pae, pae_len, p->sig, p->sig_len);",
     "bool ok = pae && signing_key_verify(key, p->payload, p->payload_len, p->sig, p->sig_len);",
     ["verify/signature-over-raw-payload"]),
    ("the payload type must be in-toto's", "host/attest/dsse.c",
     "if (strcmp(type, DSSE_PAYLOAD_TYPE) != 0)", "if (0)",
     ["verify/payload-type-changed"]),
    ("subjects must be the config's capsules", "host/attest/statement.c",
     "  const json_t *got = json_object_get(statement, \"subject\");\n",
     "  if (want) return CAP_OK; /* reverted */\n  const json_t *got = json_object_get(statement, \"subject\");\n",
     ["verify/subjects-not-the-config-capsules"]),
    ("verify --config compares the re-attested world", "host/attest/statement.c",
     "  diff(\"\", a, b, drift);\n", "  (void)diff, (void)drift;\n",
     ["verify/world-drift-node-replaced"]),
    ("a private key others can read is refused", "host/attest/signing_key.c",
     "if (private_key && (st.st_mode & 077)) {", "if (private_key && 0) {",
     ["verify/private-key-readable-by-others"]),
    ("keygen never overwrites a key", "host/attest/signing_key.c",
     "O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW", "O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC",
     ["verify/keygen-never-overwrites"]),
    ("a Node with built-ins outside its binary is RUNTIME_UNSUPPORTED", "host/attest/attest.c",
     "if (classify_bwrap_failure(c, &classified) || classify_node_failure(h, c, &classified))",
     "(void)classify_node_failure;\n    if (classify_bwrap_failure(c, &classified))",
     ["attest/node-with-external-builtins"]),
    ("serve restates the world once its startup snapshot is decided", "host/serve/serve.c",
     "  restate_the_world(s->h);\n", "  (void)restate_the_world;\n",
     ["pytest/test_attestations.py::test_serve_restates_the_world_when_its_snapshot_is_adopted"]),
    ("a bundle's verificationMaterial is checked or refused (issue 36.1)", "host/attest/dsse.c",
     '  if (read_material(json_object_get(b, "verificationMaterial"), &hint, err)) return err->code;\n',
     '  (void)read_material;\n  hint = json_string_value(json_object_get(json_object_get(json_object_get(b, '
     '"verificationMaterial"), "publicKey"), "hint"));\n  if (!hint) hint = "";\n',
     ["verify/bundle-public-key-unknown-field", "verify/bundle-public-key-not-an-object",
      "verify/bundle-tlog-entry-unchecked",
      "verify/bundle-timestamp-data-junk", "verify/bundle-timestamp-unchecked"]),
    ("the signed world pins capsule-launcher and capsule-probe (issue 36.3)", "host/attest/world_predicate.c",
     '"launcherSha256", launcher,\n      "probeSha256", probe,', '"launcherSha256", "", "probeSha256", "",',
     ["verify/world-drift-launcher-replaced", "verify/world-drift-probe-replaced"]),
    ("the signed world states the heap and tmpfs ceilings (issue 36.2)", "host/cell/launch_document.c",
     "  if (r) {\n    json_object_set_new(r, \"heapBytes\"", "  if (0) {\n    json_object_set_new(r, \"heapBytes\"",
     ["verify/world-drift-heap-ceiling-changed", "verify/world-drift-tmpfs-bound-changed"]),
    ("an encrypted key is refused, never prompted for (issue 36.6)", "host/attest/signing_key.c",
     "PEM_read_bio_PrivateKey(b, NULL, refuse_passphrase, encrypted)", "PEM_read_bio_PrivateKey(b, NULL, NULL, NULL)",
     ["verify/private-key-encrypted",
      "pytest/test_attestations.py::test_an_encrypted_key_is_refused_without_a_prompt_even_on_a_terminal"]),
    ("a summary's file name comes from validated data only (issue 36.4)", "host/attest/statement_write.c",
     "    summary_id(cap, i, id, sizeof id);\n",
     '    (void)summary_id;\n    snprintf(id, sizeof id, "%s", cap->m.id ? cap->m.id : "x");\n',
     ["pytest/test_attestations.py::test_a_refused_manifest_id_never_names_a_file[x/../../escaped]"]),
    ("an unusable --statement DIR is STATEMENT_DIR_INVALID, not INTERNAL (issue 36.5)",
     "host/attest/statement_write.c",
     "  if (dirfd < 0)\n    cap_fail(err, CAP_E_STATEMENT_DIR_INVALID,",
     "  if (dirfd < 0)\n    cap_fail(err, CAP_E_INTERNAL,",
     ["attest/statement-dir-is-a-file", "attest/statement-dir-through-a-symlink"]),
    ("a refused line's id is given back only as the text sent (issue 36.7)", "host/serve/jsonrpc_id.c",
     "  return json_is_number(id) ? exact_integer(line, len, at) : NULL;\n",
     "  (void)exact_integer, (void)line, (void)len, (void)at;\n"
     "  return json_is_number(id) ? json_integer((json_int_t)json_number_value(id)) : NULL;\n",
     ["pytest/test_mcp_protocol.py::test_a_refused_line_is_never_answered_under_another_id[1.0]",
      "pytest/test_mcp_protocol.py::test_a_refused_line_is_never_answered_under_another_id[-0]"]),
    ("the id recovery parses within one budget (issue 36.10)", "host/serve/mcp.c",
     "jsonrpc_id_recover(line, len, sj_parse_budget(len, lim))",
     "jsonrpc_id_recover(line, len, 2 * sj_parse_budget(len, lim))",
     ["pytest/test_mcp_protocol.py::test_a_refused_line_costs_one_parse_budget_not_two"]),
    ("a tools/call refused by the protocol layer is logged (issue 36.8)", "host/serve/mcp.c",
     '  if (r->method && strcmp(r->method, "tools/call") == 0) {\n    const char *name',
     '  if (0) {\n    const char *name',
     ["pytest/test_mcp_protocol.py::test_every_refused_tools_call_leaves_its_one_audit_line"]),
    ("a cancel that meets a call while its cell is joined is logged CALL_CANCELLED (issue 36.12)",
     "host/serve/scheduler.c",
     'serve_log_call(c->tool, c->cancelled ? "CALL_CANCELLED" : ended,',
     'serve_log_call(c->tool, ended,',
     ["pytest/test_unit_boundaries.py::test_unit[scheduler]"]),
    ("the host's own reports are read under bounds of their own (issue 36.11)", "host/cell/cell_start.c",
     "void cell_report_bounds(cell *c) {\n", "void cell_report_bounds(cell *c) {\n  return;\n",
     ["attest/smallest-frame-bound-attests", "frames/guest-frame-past-a-small-bound"]),
    ("past the parse budget jansson gets memory and its reader stops the parse", "common/strict_json.c",
     "      budget.exceeded = true;\n      budget.left = 0;\n", "      budget.exceeded = true;\n      return NULL;\n",
     ["pytest/test_fuzz_regressions.py::test_seeds_and_regressions_replay_clean[cell_reports]"]),
]


# Cases that cannot tell their fix apart on this machine, and why: printed,
# not hidden, and not counted as failures of the proof.
KNOWN_SURVIVORS = {
    ("seccomp filter passed to bwrap", "hazards/bpf-denied"):
        "kernel.unprivileged_bpf_disabled=2 here: the kernel answers EPERM too",
}


def known_survivors():
    """KNOWN_SURVIVORS, and those of a kernel feature detected here."""
    known = dict(KNOWN_SURVIVORS)
    if i386_entry_faults():
        known[("seccomp filter passed to bwrap", "hazards/i386-abi-denied")] = (
            "this kernel has no i386 entry (int $0x80 faults with SIGSEGV outside any sandbox): "
            "the attack is impossible here, so the filter's rule cannot be told apart")
    return known


# C tokens: string literals, identifiers/numbers, then any other character.
TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\w+|[^\w\s]')


def token_pattern(code):
    """A regex matching code whatever its layout: the same tokens, with any
    whitespace (including line breaks and re-indentation) between them, so a
    reformat of the source cannot silently unmatch a revert."""
    return re.compile(r"\s*".join(re.escape(t) for t in TOKEN.findall(code)))


def revert(text, old, new, fix, path):
    matches = list(token_pattern(old).finditer(text))
    if len(matches) != 1:
        sys.exit(f"revert for '{fix}' matches {len(matches)} places in {path}, not exactly one")
    start, end = matches[0].span()
    # A revert written as whole lines (old starts with indentation) replaces
    # the line's own indentation too, so new's layout is what compiles.
    if old[:1].isspace():
        while start > 0 and text[start - 1] in " \t":
            start -= 1
    if old.endswith("\n") and text[end:end + 1] == "\n":
        end += 1
    return text[:start] + new + text[end:]


def run_cases(tree, cases):
    bindir = tree / "build" / "bin"
    ids = {c: c if "::" in c else f"pytest/test_attack_corpus.py::test_case[{c}]" for c in cases}
    p = subprocess.run(["/usr/bin/python3", "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider",
                        "-p", "no:matrix_plugin", *ids.values()], cwd=tree, capture_output=True,
                       text=True, env={"PATH": "/usr/local/bin:/usr/bin:/bin", "CAPSULE_BIN": str(bindir)})
    failed = {c for c, node in ids.items() if f"FAILED {node}" in p.stdout}
    return failed, p


def prove(tmp, base, revert_entry, slot, survivors_here):
    """Reverts one fix in a copy of base (slot: which worker's copy), builds
    it, runs its cases; returns its rows and the cases that survived."""
    fix, path, old, new, cases = revert_entry
    tree = Path(tmp) / f"mutant-{slot}"
    if tree.exists():
        shutil.rmtree(tree)
    # The base's build comes along (mtimes kept): make recompiles only the
    # reverted file, newer than its object. The Makefile tracks no header
    # dependencies, so a header revert starts clean.
    shutil.copytree(base, tree, symlinks=True)
    if not path.endswith(".c"):
        shutil.rmtree(tree / "build")
    src = tree / path
    text = src.read_text()
    src.write_text(revert(text, old, new, fix, path))
    built = subprocess.run(["make", "-s", "-C", str(tree), "-j2"], capture_output=True, text=True)
    if built.returncode != 0:
        sys.exit(f"revert for '{fix}' does not build:\n{built.stderr[-2000:]}")
    failed, _ = run_cases(tree, cases)
    rows, survivors = [], []
    for c in cases:
        known = survivors_here.get((fix, c))
        verdict = ("FAILS (fix proven)" if c in failed else
                   f"still passes: {known}" if known else "STILL PASSES")
        rows.append((fix, c, verdict))
        if c not in failed and not known:
            survivors.append((fix, c))
    return rows, survivors


def main():
    survivors_here = known_survivors()
    # PROVE_ONLY=<regex> proves only the fixes whose name matches (local runs).
    only = os.environ.get("PROVE_ONLY")
    reverts = [r for r in REVERTS if not only or re.search(only, r[0])]
    # Two mutants at a time on two cores (PROVE_JOBS): the cases mostly wait
    # on cells, and each mutant has its own tree, build, staging and
    # processes (every case counts only what its own run started).
    jobs = max(1, int(os.environ.get("PROVE_JOBS", str(min(2, os.cpu_count() or 1)))))
    rows, survivors = [], []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        shutil.copytree(REPO, base, ignore=shutil.ignore_patterns("build", "node_modules", ".git"))
        subprocess.run(["make", "-s", "-C", str(base), "-j2"], check=True, capture_output=True)
        all_cases = sorted({c for r in reverts for c in r[4]})
        failed, p = run_cases(base, all_cases)
        if failed or p.returncode != 0:
            print(p.stdout[-3000:])
            sys.exit("cases fail on the unmodified tree: " + ", ".join(sorted(failed)))
        slots = queue.Queue()
        for i in range(jobs):
            slots.put(i)

        def one(entry):
            slot = slots.get()
            try:
                return prove(tmp, base, entry, slot, survivors_here)
            finally:
                slots.put(slot)
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            for r, s in pool.map(one, reverts):  # in REVERTS order, whatever finished first
                rows += r
                survivors += s
    width = max(len(r[0]) for r in rows)
    print(f"{'fix reverted':<{width}}  {'case':<44}  with fix  reverted")
    for fix, c, verdict in rows:
        print(f"{fix:<{width}}  {c.replace('pytest/test_containment.py', 'containment'):<44}  pass      {verdict}")
    if survivors:
        sys.exit(f"{len(survivors)} case(s) do not depend on their fix: {survivors}")
    proven = sum(1 for r in rows if r[2].startswith("FAILS"))
    print(f"{proven} of {len(rows)} guarded cases fail when their fix is reverted; "
          f"{len(rows) - proven} known survivor(s) explained above")


if __name__ == "__main__":
    main()
