#!/usr/bin/env bash
# The dsh-capsule gate for a caller's capsules (ci/action/action.yml runs it;
# it runs anywhere the host is built). Steps, each failing the gate with the
# host's stable error code:
#   1. doctor --config: the preflight with the caller's config
#   2. activate: everything the config publishes (tools, prompt sections)
#   3. attest: the execution-world attestation report, and the signed
#      in-toto statements (statements/: the world and a verification summary
#      per capsule, each as .intoto.json, .dsse.json and .sigstore.json;
#      world.predicate.json is the world predicate alone, for GitHub's
#      actions/attest). The key is CAPSULE_ATTEST_KEY (PEM, a secret) or the
#      file CAPSULE_ATTEST_KEY_FILE; without one they are unsigned and the
#      gate says so.
#   4. each smoke call (CAPSULE_CALLS: one "TOOL JSON" per line) must return
#      isError false
# Reports land in CAPSULE_REPORTS (default ./capsule-gate): config.json,
# doctor.json, activation.json, attestation.json, call-N.json; on GitHub the
# job summary (ci/action/summary.py) shows the verdict, doctor's checks, the
# world statement's digest and signing key id, and the smoke calls.
# The config may write ${GITHUB_WORKSPACE} in paths; only that is expanded.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
host="${CAPSULE_HOST:-$root/build/bin/capsule-host}"  # CAPSULE_HOST: another build (tests)
out=${CAPSULE_REPORTS:-$PWD/capsule-gate}
mkdir -p "$out"

# The job summary ($GITHUB_STEP_SUMMARY, on GitHub): the verdict at a glance.
# Every text a capsule, config or the host wrote is rendered inert there,
# and escaped in annotations (ci/action/gate_text.py).
job_summary() { # passed DETAIL | FAILED STEP REPORT
  [ -z "${GITHUB_STEP_SUMMARY:-}" ] || python3 "$root/ci/action/summary.py" "$out" "$@" >> "$GITHUB_STEP_SUMMARY" || true
}

fail() { # step title, report file
  python3 "$root/ci/action/gate_text.py" error "$1" "$2"
  job_summary FAILED "$1" "$2"
  exit 1
}

[ -n "${CAPSULE_CONFIG:-}" ] || { echo "gate: set CAPSULE_CONFIG (the action's 'config' input)" >&2; exit 2; }
[ -x "$host" ] || { echo "gate: $host is missing: run make in $root" >&2; exit 2; }
python3 - "$CAPSULE_CONFIG" "$out/config.json" <<'PY'
import os, sys
text = open(sys.argv[1]).read()
ws = os.environ.get("GITHUB_WORKSPACE")
if ws:
    text = text.replace("${GITHUB_WORKSPACE}", ws)
open(sys.argv[2], "w").write(text)
PY
config="$out/config.json"

"$host" doctor --config "$config" > "$out/doctor.json" 2> "$out/doctor.log" || fail doctor "$out/doctor.json"
"$host" activate --config "$config" > "$out/activation.json" 2> "$out/activation.log" ||
  fail activation "$out/activation.json"
statements="$out/statements"
key_args=()
[ -z "${CAPSULE_ATTEST_KEY_FILE:-}" ] || key_args=(--key "$CAPSULE_ATTEST_KEY_FILE")
"$host" attest --config "$config" --statement "$statements" "${key_args[@]}" > "$out/attestation.json" \
  2> "$out/attestation.log" || fail attestation "$out/attestation.json"
if grep -q '"signed":false' "$out/attestation.log"; then
  python3 "$root/ci/action/gate_text.py" warning "dsh-capsule gate" \
    "the attestations in $statements are NOT signed: pass a key (attest-key: \${{ secrets.CAPSULE_ATTEST_KEY }})"
fi
python3 -c 'import json,sys; json.dump(json.load(open(sys.argv[1]))["predicate"], open(sys.argv[2], "w"), indent=2)' \
  "$statements/world.intoto.json" "$statements/world.predicate.json"

n=0
while IFS= read -r line; do
  [ -n "${line//[[:space:]]/}" ] || continue
  n=$((n + 1))
  tool=${line%% *}
  input=${line#"$tool"}
  input=${input# }
  [ -n "$input" ] || input='{}'
  report="$out/call-$n.json"
  "$host" call --config "$config" "$tool" --input "$input" > "$report" 2> "$out/call-$n.log" ||
    fail "call $n ($tool)" "$report"
  python3 -c 'import json,sys; sys.exit(1 if json.load(open(sys.argv[1]))["result"]["isError"] else 0)' "$report" ||
    fail "call $n ($tool) returned isError" "$report"
done <<< "${CAPSULE_CALLS:-}"

tools=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["tools"]))' "$out/activation.json")
echo "gate: ok: $tools tools published, $n smoke call(s) passed; reports in $out"
job_summary passed "$tools tools, $n smoke call(s)"
[ -z "${GITHUB_OUTPUT:-}" ] || printf 'report-dir=%s\nstatements-dir=%s\n' "$out" "$statements" >> "$GITHUB_OUTPUT"
