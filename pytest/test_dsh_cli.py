"""dsh-capsule through the real DeepSeek Harness CLI (`@deepseek-ai/dsh`
0.1.0-rc.8, pinned with the versions that boot it in pytest/dsh-cli), the
way README "Install in DeepSeek Harness" says: `dsh plugin add` of this
repository (a git URL of a snapshot of the working tree, the same pnpm git
path as `github:`), `make -C` in the installed package, the README's
override, `--dump-config`, then headless one-shots against a scripted model
provider (pytest/dsh-cli/scripted-model.mjs) that records every request.

Run by `make test-dsh` (and `.ci/run`), not by `make test`: it installs
~450 npm packages on first use (cached by the lock file's digest)."""
import hashlib
import json
import os
import re
import shutil
import subprocess
import time

import pytest
import yaml

from capsule_lab import REPO, cell_processes, copy_working_tree, host_processes

CLI = REPO / "pytest" / "dsh-cli"
SCRIPTED_MODEL = CLI / "scripted-model.mjs"
PROFILE = "headless"
LOADED_RUNS = 6


def install_cli():
    """The pinned DSH CLI, installed from the lock file and reused while it is
    unchanged. --legacy-peer-deps: npm livelocks placing DSH's cyclic peers
    (npm/cli#9934), so they are direct dependencies instead; `npm ci` refuses
    that lock (it counts other platforms' optional binaries as missing), and
    `npm install` installs exactly the locked versions without rewriting it."""
    lock = (CLI / "package-lock.json").read_bytes()
    stamp = CLI / "node_modules" / ".capsule-lock-sha256"
    digest = hashlib.sha256(lock).hexdigest()
    if not stamp.exists() or stamp.read_text() != digest:
        subprocess.run(["npm", "install", "--legacy-peer-deps", "--no-audit", "--no-fund"],
                       cwd=CLI, check=True, capture_output=True, timeout=1200)
        stamp.write_text(digest)


def snapshot_repository(dest):
    """The working tree's tracked and new files as one commit: what
    `dsh plugin add github:...` would fetch if this tree were pushed."""
    copy_working_tree(dest)
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@invalid"]
    subprocess.run(git + ["init", "-q"], cwd=dest, check=True)
    subprocess.run(git + ["add", "-A"], cwd=dest, check=True)
    subprocess.run(git + ["commit", "-qm", "snapshot"], cwd=dest, check=True)


def readme_override(package):
    """The README's profile override, with its example root pointed at the
    installed package's example capsule."""
    install = (REPO / "docs" / "DSH.md").read_text()
    block = install.split("```yaml\n", 1)[1].split("```", 1)[0]
    return block.replace("/absolute/path/to/dsh-capsule", str(package))


class Dsh:
    def __init__(self, tmp):
        self.home = tmp / "dsh-home"
        self.stage = tmp / "stage"
        self.stage.mkdir(mode=0o755)
        self.work = tmp / "work"
        self.work.mkdir()
        self.tmp = tmp
        self.env = {
            "PATH": f"{CLI / 'node_modules' / '.bin'}:{os.environ['PATH']}",
            "HOME": os.environ.get("HOME", "/root"),
            "DSH_HOME": str(self.home),
            "DSH_TELEMETRY_DISABLED": "1",
            "TMPDIR": str(self.stage),
        }
        self.profile = self.home / "profiles" / PROFILE

    def run(self, *args, timeout=300):
        return subprocess.run(["dsh", *args], cwd=self.work, env=self.env, capture_output=True,
                              text=True, timeout=timeout)

    def oneshot(self, *overlays, tool="capsule_echo"):
        """One headless turn; returns the process and the model requests."""
        record = self.tmp / f"requests-{time.monotonic_ns()}.jsonl"
        model = self.tmp / f"model-{record.stem}.yml"
        model.write_text(yaml.safe_dump([
            {"insert": [{"id": "scripted-model", "name": str(SCRIPTED_MODEL),
                         "config": {"record": str(record), "tool": tool,
                                    "arguments": {"text": "through DSH"}}}]},
            {"id": "agent-default-model", "config": {"provider": "scripted", "model": "script-1"}},
        ]))
        args = ["--profile", PROFILE, "--patch", str(model)]
        for o in overlays:
            args += ["--patch", str(o)]
        p = self.run(*args, "call the capsule")
        requests = [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
        turns = [r for r in requests if r["purpose"] is None]
        return p, turns

    def assert_nothing_left(self):
        for _ in range(100):
            if not host_processes() and not cell_processes():
                break
            time.sleep(0.05)
        assert host_processes() == [] and cell_processes() == []
        assert [d for d in os.listdir(self.stage) if d.startswith("dsh-capsule")] == []

    def overlay(self, name, rows):
        path = self.tmp / f"{name}.yml"
        path.write_text(yaml.safe_dump(rows))
        return path


@pytest.fixture(scope="module")
def dsh(tmp_path_factory):
    install_cli()
    d = Dsh(tmp_path_factory.mktemp("dsh"))
    version = d.run("--version")
    assert version.stdout.strip() == "0.1.0-rc.8", version
    node = subprocess.run(["node", "--version"], env=d.env, capture_output=True, text=True)
    assert int(node.stdout[1:].split(".")[0]) >= 22, "DSH loads out-of-tree plugins on Node >= 22 only"
    src = d.tmp / "dsh-capsule-src"
    src.mkdir()
    snapshot_repository(src)
    d.run("--profile", PROFILE, "--dump-config")  # creates the profile from its template
    added = d.run("plugin", "--profile", PROFILE, "add", f"git+file://{src}")
    assert added.returncode == 0, added.stdout + added.stderr
    d.package = d.profile / "node_modules" / "dsh-capsule"
    assert (d.package / "Makefile").is_file() and not (d.package / "build").exists()
    (d.profile / "cordis.patch.yml").write_text(readme_override(d.package))
    # Before `make`: the row must say what to run, and DSH must keep going.
    d.unbuilt = d.oneshot()
    d.assert_nothing_left()
    built = subprocess.run(["make", "-C", str(d.package), "-j2"], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    return d


def test_unbuilt_install_registers_nothing_and_says_what_to_run(dsh):
    p, turns = dsh.unbuilt
    assert p.returncode == 0, p.stderr
    assert "fatal" not in p.stderr
    line = f"activation failed, nothing registered: ROW_HOST_NOT_FOUND: capsule-host is not built at {dsh.package}/build/bin/capsule-host"
    assert line in p.stderr
    assert f"make -C {dsh.package}" in p.stderr and "hostCommand" in p.stderr
    assert turns and "capsule_echo" not in turns[0]["tools"]
    assert "capsule_echo" not in turns[0]["system"]


def test_dump_config_shows_the_readme_override(dsh):
    p = dsh.run("--profile", PROFILE, "--dump-config")
    assert p.returncode == 0, p.stderr
    head = f"# == dsh-capsule, patched by {dsh.profile / 'cordis.patch.yml'}"
    assert head in p.stdout
    row = p.stdout.split(head, 1)[1].split("\n# ==", 1)[0]
    tree = yaml.safe_load(row)
    assert tree[0]["id"] == "dsh-capsule-host" and tree[0]["name"] == "dsh-capsule/dsh"
    capsule = tree[0]["config"]["capsules"][0]
    assert capsule["root"] == f"{dsh.package}/examples/echo-capsule"
    assert tree[0]["config"]["maxCellMemoryMb"] == 1024


def check_first_request_and_call(dsh, p, turns):
    assert p.returncode == 0, p.stderr
    assert len(turns) == 2, turns
    first, second = turns
    assert "capsule_echo" in first["tools"], "the capsule's tool is in DSH's first model request"
    assert "Use capsule_echo to check that the capsule host is reachable" in first["system"]
    result = second["results"][0]
    assert result["isError"] is False
    assert json.loads(result["content"][0]["text"]) == {"text": "through DSH"}
    assert 'result: [{"type":"text","text":"{\\"text\\":\\"through DSH\\"}"}]' in p.stdout
    dsh.assert_nothing_left()


def test_first_request_lists_the_tools_and_the_call_runs_in_a_cell(dsh):
    p, turns = dsh.oneshot()
    check_first_request_and_call(dsh, p, turns)
    host_json = dsh.tmp / "activate.json"
    host_json.write_text(json.dumps(yaml.safe_load(readme_override(dsh.package))[0]["config"]))
    activated = json.loads(subprocess.run(
        [str(dsh.package / "build/bin/capsule-host"), "activate", "--full", "--config", str(host_json)],
        capture_output=True, text=True, env={"PATH": dsh.env["PATH"], "TMPDIR": str(dsh.stage)}).stdout)
    texts = [s["text"] for s in activated["promptSections"]]
    assert texts and all(t in turns[0]["system"] for t in texts), "every published section is in the system prompt"


def test_first_request_lists_the_tools_under_load(dsh):
    """The race showed under load: two busy loops (one per core) while the
    one-shots run; every run must see the tools in its first request."""
    burners = [subprocess.Popen(["python3", "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)]
    seen = 0
    try:
        for _ in range(LOADED_RUNS):
            p, turns = dsh.oneshot()
            check_first_request_and_call(dsh, p, turns)
            seen += 1
    finally:
        for b in burners:
            b.kill()
            b.wait()
    print(f"loaded runs with the tools in the first request: {seen}/{LOADED_RUNS}")


def test_first_request_waits_for_a_slow_host(dsh):
    """Deterministic form of the race: a host that takes two seconds before
    it starts activating. DSH's first model request must still list the tools."""
    slow = dsh.tmp / "slow-host"
    slow.write_text(f"#!/bin/sh\nsleep 2\nexec {dsh.package}/build/bin/capsule-host \"$@\"\n")
    slow.chmod(0o755)
    p, turns = dsh.oneshot(broken_override(dsh, hostCommand=str(slow)))
    check_first_request_and_call(dsh, p, turns)


def broken_override(dsh, **changes):
    rows = yaml.safe_load(readme_override(dsh.package))
    rows[0]["config"].update(changes)
    return dsh.overlay("broken", rows)


def test_wrong_digest_registers_nothing_and_dsh_exits_0(dsh):
    bad = dsh.tmp / "bad-capsule"
    shutil.copytree(dsh.package / "examples" / "echo-capsule", bad)
    manifest = json.loads((bad / "capsule.json").read_text())
    manifest["integrity"]["sha256"] = "0" * 64
    (bad / "capsule.json").write_text(json.dumps(manifest))
    rows = yaml.safe_load(readme_override(dsh.package))
    rows[0]["config"]["capsules"][0]["root"] = str(bad)
    p, turns = dsh.oneshot(dsh.overlay("bad-digest", rows))
    assert p.returncode == 0, p.stderr
    assert "dsh-capsule-host: activation failed, nothing registered: INTEGRITY_MISMATCH" in p.stderr
    errors_md = dsh.package / "docs" / "ERRORS.md"
    assert f"(what to do: {errors_md}, INTEGRITY_MISMATCH)" in p.stderr
    assert "### `INTEGRITY_MISMATCH`" in errors_md.read_text()
    assert "capsule_echo" not in turns[0]["tools"] and "capsule_echo" not in turns[0]["system"]
    dsh.assert_nothing_left()


@pytest.mark.parametrize("host,code", [("/nonexistent/capsule-host", "ROW_HOST_NOT_FOUND"),
                                       ("build/bin/capsule-host", "ROW_CONFIG_INVALID")])
def test_missing_host_registers_nothing_and_dsh_exits_0(dsh, host, code):
    p, turns = dsh.oneshot(broken_override(dsh, hostCommand=host))
    assert p.returncode == 0, p.stderr
    assert f"dsh-capsule-host: activation failed, nothing registered: {code}: hostCommand" in p.stderr
    assert "capsule_echo" not in turns[0]["tools"]
    dsh.assert_nothing_left()


def test_zero_js_route_through_dsh_mcp_client(dsh):
    """DSH's own MCP client row pointing at `capsule-host serve` (README,
    "Serve"), with the JS row disabled."""
    config = yaml.safe_load(readme_override(dsh.package))[0]["config"]
    host_json = dsh.tmp / "host.json"
    host_json.write_text(json.dumps(config))
    overlay = dsh.overlay("zero-js", [
        {"id": "dsh-capsule-host", "disabled": True},
        {"insert": [{"id": "mcp-capsule", "name": "@deepseek-ai/dsh-mcp-client",
                     "config": {"serverName": "capsule", "transport": "stdio",
                                "command": str(dsh.package / "build/bin/capsule-host"),
                                "args": ["serve", "--config", str(host_json)]}}]},
    ])
    p, turns = dsh.oneshot(overlay, tool="mcp__capsule__capsule_echo")
    assert p.returncode == 0, p.stderr
    assert "mcp__capsule__capsule_echo" in turns[0]["tools"]
    assert "capsule_echo" not in [t for t in turns[0]["tools"] if not t.startswith("mcp__")]
    result = turns[1]["results"][0]
    assert result["isError"] is False
    assert re.search(r'through DSH', json.dumps(result["content"]))
    dsh.assert_nothing_left()
