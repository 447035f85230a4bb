"""The dsh-capsule-host row against the real DSH packages from npm, at the
versions a booting dsh 0.1.0-rc.8 install resolves (@deepseek-ai/cordis
4.0.1, dsh-tools, dsh-system-prompt, dsh-subprocess, dsh-subprocess-local
0.1.0-rc.8): booted in a real Cordis context with those services, its async
apply returns only once the published tools and prompt sections are
registered, calls run through real bwrap cells, activation failures register
nothing and never reject, a host that dies withdraws everything, and
disposing the row disposes the host. The whole CLI path is
test_dsh_cli.py (`make test-dsh`)."""
import json
import os
import re
import subprocess

import pytest
import yaml

from capsule_lab import BIN, LIMIT_DEFAULTS, REPO, cell_processes, host_processes, npm_ci_once
from test_end_to_end import example_config

HARNESS = REPO / "pytest" / "dsh-harness"


@pytest.fixture(scope="module")
def dsh_packages():
    """Installs the pinned DSH packages (needs the npm registry; a failure
    fails the test, it never skips)."""
    npm_ci_once(HARNESS, "@deepseek-ai/dsh-tools")
    versions = {}
    for pkg in ("cordis", "dsh-tools", "dsh-system-prompt", "dsh-subprocess", "dsh-subprocess-local"):
        meta = json.loads((HARNESS / "node_modules" / "@deepseek-ai" / pkg / "package.json").read_text())
        versions[pkg] = meta["version"]
    return versions


def boot(lab, config, host=None, mode="call"):
    host = str(BIN / "capsule-host") if host is None else host
    p = subprocess.run(["node", str(HARNESS / "run.mjs"), str(config), host, mode],
                       capture_output=True, text=True, timeout=120,
                       env={"PATH": os.environ["PATH"], "TMPDIR": str(lab.stage)})
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["unhandled"] is None, out["unhandled"]
    return out, p.stderr



def test_row_registers_tools_and_sections_and_calls_through_cells(lab, dsh_packages):
    assert dsh_packages["dsh-tools"] == "0.1.0-rc.8" and dsh_packages["cordis"] == "4.0.1"
    out, _ = boot(lab, example_config(lab))
    assert out["events"] == [{"ready": {"tools": ["capsule_echo", "capsule_read"],
                                        "sections": ["capsule.echo.guidance"]}}]
    assert out["settledBeforeApplyReturned"], "registration completes inside apply: DSH's startup waits for it"
    assert out["tools"] == ["capsule_echo", "capsule_read"]
    assert out["echo"]["value"] == {"output": {"text": "through DSH"}}
    assert out["echo"]["schemaErrors"] == []
    assert json.loads(out["echo"]["rendered"][0]["text"]) == {"text": "through DSH"}
    assert out["badInput"].startswith("INPUT_INVALID")
    assert out["read"]["output"]["path"] == "reference/context.txt"
    ours = [s for s in out["sections"] if s["name"] == "capsule.echo.guidance"]
    assert len(ours) == 1 and "capsule_echo" in ours[0]["text"]
    assert out["toolsAfterDispose"] == []
    assert "capsule.echo.guidance" not in out["sectionsAfterDispose"]
    assert host_processes() == [] and cell_processes() == []
    ours = [d for d in os.listdir(lab.stage) if d.startswith("dsh-capsule")]
    assert ours == [], "host staging and the row's config file are removed"


def test_failed_activation_registers_nothing_and_reports_the_code(lab, dsh_packages):
    _, _, bad = lab.capsule(guest="echo", integrity="0" * 64)
    out, stderr = boot(lab, lab.config([bad]))
    assert out["events"][0]["failed"]["code"] == "INTEGRITY_MISMATCH"
    assert out["tools"] == []
    assert all(s["name"].startswith(("harness:", "deployment:")) for s in out["sections"])
    assert "activation failed, nothing registered: INTEGRITY_MISMATCH" in stderr
    assert host_processes() == [] and cell_processes() == []


def test_prompt_with_template_braces_registers_nothing(lab, dsh_packages):
    _, _, entry = lab.capsule(guest="lie", params={"promptSections": [{"id": "corpus.guidance", "text": "{{secret}}"}]})
    out, _ = boot(lab, lab.config([entry]))
    assert out["events"][0]["failed"]["code"] == "PROMPT_TEMPLATE_REFUSED"
    assert out["tools"] == []


def test_bundle_row_is_inert_with_the_seed_defaults():
    pkg = json.loads((REPO / "package.json").read_text())
    # pnpm 12 refuses a git-hosted package with build scripts unless allowlisted:
    # one would break `dsh plugin add github:...` (README).
    assert not set(pkg.get("scripts", {})) & {"preinstall", "install", "postinstall", "prepare"}
    assert pkg["dsh"]["bundle"]["patch"] == "./cordis.patch.yml"
    assert pkg["exports"]["./dsh"] == "./dsh/index.mjs"
    for peer in ("@deepseek-ai/dsh-subprocess", "@deepseek-ai/dsh-system-prompt", "@deepseek-ai/dsh-tools"):
        assert pkg["peerDependencies"][peer] == ">=0.1.0-rc.5 <0.2.0"
    patch = yaml.safe_load((REPO / "cordis.patch.yml").read_text())
    row = patch[0]["insert"][0]
    assert row["id"] == "dsh-capsule-host"
    assert row["config"]["capsules"] == []
    assert {k: v for k, v in row["config"].items() if k != "capsules"} == LIMIT_DEFAULTS


def test_host_that_dies_later_withdraws_everything(lab, dsh_packages):
    out, stderr = boot(lab, example_config(lab), mode="kill-host")
    assert out["tools"] == ["capsule_echo", "capsule_read"]
    withdrawn = out["events"][1]["withdrawn"]
    assert withdrawn["code"] == "ROW_HOST_EXITED"
    assert withdrawn["message"].startswith("capsule-host exited (signal SIGKILL)")
    assert out["toolsAfterDeath"] == []
    assert "capsule.echo.guidance" not in out["sectionsAfterDeath"]
    assert "capsule-host stopped, every tool and section withdrawn: ROW_HOST_EXITED" in stderr
    assert host_processes() == [] and cell_processes() == []


@pytest.mark.parametrize("host,code,says", [
    ("/nonexistent/capsule-host", "ROW_HOST_NOT_FOUND", "hostCommand /nonexistent/capsule-host is not an executable file"),
    ("plain", "ROW_HOST_NOT_FOUND", "is not an executable file"),
    ("garbage", "ROW_HOST_EXITED", "capsule-host exited (status"),
    ("capsule-host", "ROW_CONFIG_INVALID", "hostCommand must be an absolute path")])
def test_missing_host_registers_nothing_and_never_rejects(lab, dsh_packages, host, code, says):
    if host in ("plain", "garbage"):
        path = lab.tmp / host
        path.write_bytes(b"\x7fELF not really")
        path.chmod(0o644 if host == "plain" else 0o755)
        host = str(path)
    out, stderr = boot(lab, example_config(lab), host=host)
    assert out["events"][0]["failed"]["code"] == code
    assert says in out["events"][0]["failed"]["message"]
    assert out["tools"] == []
    assert f"activation failed, nothing registered: {code}: " in stderr
    assert host_processes() == []


def test_host_that_publishes_nothing_times_out(lab, dsh_packages):
    """A host that never answers (here: one that ignores its stdin) holds
    DSH's startup only for activationTimeoutMs, then is stopped."""
    silent = lab.tmp / "silent-host"
    silent.write_text("#!/bin/sh\nexec sleep 30\n")
    silent.chmod(0o755)
    config = json.loads(example_config(lab).read_text())
    config["activationTimeoutMs"] = 300
    path = lab.tmp / "timeout.json"
    path.write_text(json.dumps(config))
    out, stderr = boot(lab, path, host=str(silent))
    assert out["events"][0]["failed"]["code"] == "ROW_ACTIVATION_TIMEOUT"
    assert out["tools"] == [] and out["applyMs"] < 5000
    assert "ROW_ACTIVATION_TIMEOUT: capsule-host published nothing within activationTimeoutMs (300)" in stderr


def test_tool_name_dsh_already_has_registers_nothing(lab, dsh_packages):
    out, stderr = boot(lab, example_config(lab), mode="taken-name")
    assert out["events"][0]["failed"]["code"] == "ROW_REGISTRATION_REFUSED"
    assert out["tools"] == ["capsule_read"], "only the tool registered before the row: capsule_echo was withdrawn"
    assert "capsule.echo.guidance" not in [s["name"] for s in out["sections"]]
    assert host_processes() == [] and cell_processes() == []


def test_row_codes_are_documented_and_tested():
    source = "".join(p.read_text() for p in sorted((REPO / "dsh").glob("*.mjs")))
    used = set(re.findall(r'"(ROW_[A-Z_]+)"', source))
    doc = (REPO / "docs" / "ERRORS.md").read_text().split("## Codes of the DSH row", 1)[1]
    documented = set(re.findall(r"^#### `(ROW_[A-Z_]+)`", doc, re.M))
    assert used == documented
    tests = (REPO / "pytest" / "test_dsh.py").read_text() + (REPO / "pytest" / "test_dsh_cli.py").read_text()
    asserted = set(re.findall(r'"(ROW_[A-Z_]+)"', tests))
    assert used <= asserted, f"row codes no test triggers: {sorted(used - asserted)}"
