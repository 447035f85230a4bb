#!/usr/bin/env python3
"""Checks what `capsule-host doctor` and `capsule-host attest` said against
what the README promises, for the Ubuntu 24.04 gate:

  expect.py restricted DOCTOR_JSON ATTEST_JSON  userns restricted by AppArmor:
      doctor fails bwrap-preflight with USERNS_RESTRICTED and the README's
      profile fix; attest fails with USERNS_RESTRICTED naming AppArmor
  expect.py healthy DOCTOR_JSON ATTEST_JSON     every doctor check ok, and an
      attestation report

Exits 1 with one line per broken expectation."""
import json
import sys

PROFILE_FIX = "apparmor_parser --replace /etc/apparmor.d/bwrap-userns-restrict"


def load(path):
    with open(path) as f:
        return json.load(f)


def restricted(doctor, attest):
    problems = []
    checks = {c["check"]: c for c in doctor.get("checks", [])}
    pre = checks.get("bwrap-preflight", {})
    if doctor.get("ok") is not False:
        problems.append("doctor passed on a machine whose user namespaces are restricted")
    if pre.get("code") != "USERNS_RESTRICTED":
        problems.append(f"doctor bwrap-preflight: want USERNS_RESTRICTED, got {pre.get('code')}")
    if PROFILE_FIX not in pre.get("fix", ""):
        problems.append(f"doctor bwrap-preflight fix does not name the profile: {pre.get('fix')!r}")
    err = attest.get("error", {})
    if attest.get("ok") is not False or err.get("code") != "USERNS_RESTRICTED":
        problems.append(f"attest: want USERNS_RESTRICTED, got {err.get('code')}")
    if "AppArmor" not in err.get("message", ""):
        problems.append(f"attest message does not name AppArmor: {err.get('message')!r}")
    return problems


def healthy(doctor, attest):
    problems = [f"doctor {c['check']}: {c.get('code')} {c.get('detail')}"
                for c in doctor.get("checks", []) if not c.get("ok")]
    if doctor.get("ok") is not True:
        problems.append("doctor did not pass")
    if attest.get("ok") is not True or "attestation" not in attest:
        problems.append(f"attest failed: {attest.get('error')}")
    return problems


def main(argv):
    if len(argv) != 4 or argv[1] not in ("restricted", "healthy"):
        sys.exit(__doc__)
    problems = {"restricted": restricted, "healthy": healthy}[argv[1]](load(argv[2]), load(argv[3]))
    for p in problems:
        print(f"gate: {p}", file=sys.stderr)
    print(f"gate: {argv[1]}: {'ok' if not problems else 'FAILED'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
