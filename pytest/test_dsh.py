"""The dsh-capsule-host row against the real DSH packages from npm
(@deepseek-ai/cordis 4.0.4, dsh-tools, dsh-system-prompt, dsh-subprocess,
dsh-subprocess-local 0.1.0-rc.8): booted in a real Cordis context with those
services, it registers the published tools and prompt sections, calls
through real bwrap cells, registers nothing when activation fails, and
disposes everything with the row."""
import json
import os
import subprocess

import pytest
import yaml

from capsule_lab import BIN, LIMIT_DEFAULTS, REPO, cell_processes
from test_end_to_end import example_config

HARNESS = REPO / "pytest" / "dsh-harness"


@pytest.fixture(scope="module")
def dsh_packages():
    """Installs the pinned DSH packages (needs the npm registry; a failure
    fails the test, it never skips)."""
    if not (HARNESS / "node_modules" / "@deepseek-ai" / "dsh-tools").exists():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--prefix", str(HARNESS)],
                       check=True, capture_output=True)
    versions = {}
    for pkg in ("cordis", "dsh-tools", "dsh-system-prompt", "dsh-subprocess", "dsh-subprocess-local"):
        meta = json.loads((HARNESS / "node_modules" / "@deepseek-ai" / pkg / "package.json").read_text())
        versions[pkg] = meta["version"]
    return versions


def boot(lab, config):
    p = subprocess.run(["node", str(HARNESS / "run.mjs"), str(config), str(BIN / "capsule-host")],
                       capture_output=True, text=True, timeout=120,
                       env={"PATH": os.environ["PATH"], "TMPDIR": str(lab.stage)})
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1]), p.stderr


def host_processes():
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if cmd and cmd[0].endswith(b"capsule-host") and b"serve" in cmd:
            found.append(pid)
    return found


def test_row_registers_tools_and_sections_and_calls_through_cells(lab, dsh_packages):
    assert dsh_packages["dsh-tools"] == "0.1.0-rc.8"
    out, _ = boot(lab, example_config(lab))
    assert out["events"] == [{"ready": {"tools": ["capsule_echo", "capsule_read"],
                                        "sections": ["capsule.echo.guidance"]}}]
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
    assert pkg["dsh"]["bundle"]["patch"] == "./cordis.patch.yml"
    assert pkg["exports"]["./dsh"] == "./dsh/index.mjs"
    for peer in ("@deepseek-ai/dsh-subprocess", "@deepseek-ai/dsh-system-prompt", "@deepseek-ai/dsh-tools"):
        assert pkg["peerDependencies"][peer] == ">=0.1.0-rc.5 <0.2.0"
    patch = yaml.safe_load((REPO / "cordis.patch.yml").read_text())
    row = patch[0]["insert"][0]
    assert row["id"] == "dsh-capsule-host"
    assert row["config"]["capsules"] == []
    assert {k: v for k, v in row["config"].items() if k != "capsules"} == LIMIT_DEFAULTS
