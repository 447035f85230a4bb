"""capsule-host doctor diagnoses each failure the README's preflight can
hit, with the fix, reproduced here with fake bwrap and node programs."""
import json
import os
import sys

import pytest

from capsule_lab import REPO, cell_processes
from test_attack_corpus import fake_bwrap, fake_node

sys.path.insert(0, str(REPO / "ci"))
from kernel_probe import i386_entry_faults  # noqa: E402


def doctor(lab, bwrap=None, env=None):
    args = ["doctor"]
    if bwrap:
        args += ["--config", lab.config([], bubblewrapCommand=str(bwrap))]
    res = lab.run(*args, env=env)
    checks = {c["check"]: c for c in json.loads(res.stdout)["checks"]}
    return res, checks


def test_healthy_machine(lab):
    res, checks = doctor(lab)
    assert res.rc == 0, res
    assert all(c["ok"] for c in checks.values()), checks
    assert set(checks) == {"bubblewrap", "userns-sysctl", "bwrap-preflight", "bwrap-ro-bind-fd", "node", "cell-ceilings",
                           "kernel-abi", "attestation", "startup-snapshot"}
    # doctor builds the snapshot serve would build, and a cell runs from it.
    assert "a cell ran from it" in checks["startup-snapshot"]["detail"], checks
    assert lab.leftovers() == []


def test_doctor_and_the_world_say_which_syscall_entries_this_kernel_has(lab):
    """Issue 33: a kernel without the i386 entry (int $0x80 faults) made 25
    tests fail; kernel features are now detected and said. doctor's
    kernel-abi check and the world's observed.kernelAbi agree with an
    independent probe of the i386 entry (and name the x32 entry too)."""
    res, checks = doctor(lab)
    detail = checks["kernel-abi"]["detail"]
    faults = i386_entry_faults()
    assert ("i386 entry (int $0x80): absent: int $0x80 faults" in detail) == faults, detail
    assert ("i386 entry (int $0x80): present" in detail) == (not faults), detail
    assert "x32 entry: present" in detail or "x32 entry: absent" in detail, detail
    world = lab.run("attest").json["attestation"]["host"]["kernelAbi"]
    assert world["i386"].startswith("absent: int $0x80 faults" if faults else "present"), world
    print(f"this kernel: {detail}")


@pytest.mark.parametrize("mode,check,code,fix", [
    ("no-ro-bind-fd", "bwrap-ro-bind-fd", "BWRAP_FEATURE_MISSING", "--ro-bind-fd"),
    ("apparmor", "bwrap-preflight", "USERNS_RESTRICTED", "apparmor_parser --replace /etc/apparmor.d/bwrap-userns-restrict"),
    ("uidmap", "bwrap-preflight", "USERNS_RESTRICTED", "bwrap-userns-restrict"),
    ("sysctl", "bwrap-preflight", "USERNS_RESTRICTED", "kernel.unprivileged_userns_clone=1"),
])
def test_bwrap_failures_are_explained(lab, mode, check, code, fix):
    res, checks = doctor(lab, bwrap=fake_bwrap(mode))
    assert res.rc == 1, res
    assert checks[check]["ok"] is False and checks[check]["code"] == code, checks[check]
    assert fix in checks[check]["fix"], checks[check]
    assert "attestation" not in checks, "no attestation on a machine that failed the preflight"
    assert cell_processes() == []


def test_missing_bwrap(lab):
    res, checks = doctor(lab, bwrap="/nonexistent/bwrap")
    assert res.rc == 1
    assert checks["bubblewrap"]["code"] == "BWRAP_NOT_FOUND"
    assert "apt-get install --yes bubblewrap" in checks["bubblewrap"]["fix"]


def test_node_too_old(lab):
    path = f"{fake_node(lab, 'v18.19.0')}:{os.environ['PATH']}"
    res, checks = doctor(lab, env={"PATH": path})
    assert res.rc == 1
    assert checks["node"]["code"] == "RUNTIME_UNSUPPORTED"
    assert "20.11" in checks["node"]["fix"]


@pytest.mark.parametrize("version,warning", [("v20.20.2", "Node 20 reached end of life on 2026-04-30"),
                                             ("v22.23.5", None), ("v24.22.3", None)])
def test_node_past_its_end_of_life_is_a_warning(lab, version, warning):
    """Node 20 ended on 2026-04-30 (issue 25): still supported, so the check
    passes, but it says so and names the date; 22 and 24 are in support
    (their end is in 2027 and 2028: this test must change by then)."""
    path = f"{fake_node(lab, version)}:{os.environ['PATH']}"
    res, checks = doctor(lab, env={"PATH": path})
    assert checks["node"]["ok"] is True
    if warning:
        assert warning in checks["node"]["warning"], checks["node"]
    else:
        assert "warning" not in checks["node"], checks["node"]
