"""Real cells, end to end: the shipped examples, the attestation report,
persistence, races against the host's checks, descriptor leaks and an
unprivileged user."""
import hashlib
import json
import os
import pwd
import re
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from capsule_lab import (BIN, REPO, Lab, assert_failed_closed, cell_processes, expected_codes, one_worker_at_a_time,
                         guest_artifact)

EXAMPLES = REPO / "examples"


def example_config(lab, echo_root=EXAMPLES / "echo-capsule", reader_root=EXAMPLES / "reader-capsule"):
    return lab.config([
        {"root": str(echo_root), "manifest": "capsule.json",
         "policy": {"capsuleId": "example.echo", "tools": ["capsule_echo"],
                    "promptSections": ["capsule.echo.guidance"], "grants": []}},
        {"root": str(reader_root), "manifest": "capsule.json",
         "workspaceRoot": str(reader_root / "workspace"),
         "policy": {"capsuleId": "example.reader", "tools": ["capsule_read"], "promptSections": [],
                    "grants": [{"kind": "workspace-read", "path": "reference/context.txt"}]}},
    ])


def test_examples_activate_publish_everything(lab):
    res = lab.run("activate", "--full", "--config", example_config(lab))
    assert res.rc == 0 and res.json["ok"], res
    assert [(t["name"], t["capsuleId"]) for t in res.json["tools"]] == [
        ("capsule_echo", "example.echo"), ("capsule_read", "example.reader")]
    assert res.json["tools"][0]["inputSchema"]["required"] == ["text"]
    assert [s["id"] for s in res.json["promptSections"]] == ["capsule.echo.guidance"]
    assert lab.leftovers() == []


def test_activate_says_what_would_be_published_on_one_screen(lab):
    """Issue 48.6: activate printed about 290 lines (the registry and the
    whole attestation report). By default it now says what would be
    published, per capsule, and the attested world's digest; --full gives
    the whole document."""
    res = lab.run("activate", "--config", example_config(lab))
    assert res.rc == 0 and res.json["ok"], res
    assert res.json["tools"] == [{"name": "capsule_echo", "capsuleId": "example.echo"},
                                 {"name": "capsule_read", "capsuleId": "example.reader"}]
    assert res.json["promptSections"] == [{"id": "capsule.echo.guidance", "capsuleId": "example.echo"}]
    assert re.fullmatch(r"[0-9a-f]{64}", res.json["worldSha256"]) and "attestation" not in res.json
    assert len(res.stdout.splitlines()) <= 30, res.stdout
    full = lab.run("activate", "--full", "--config", example_config(lab))
    assert full.json["attestation"]["cell"]["execPath"] == "/runtime/node" and "inputSchema" in full.json["tools"][0]


def test_echo_example_call(lab):
    res = lab.run("call", "--config", example_config(lab), "capsule_echo", "--input", '{"text":"hi there"}')
    assert res.rc == 0, res
    assert res.json["result"] == {"isError": False, "output": {"text": "hi there"}}


def test_reader_example_reads_its_one_file(lab):
    res = lab.run("call", "--config", example_config(lab), "capsule_read")
    assert res.rc == 0, res
    text = (EXAMPLES / "reader-capsule" / "workspace" / "reference" / "context.txt").read_text()
    assert res.output == {"path": "reference/context.txt", "text": text}


def test_examples_digests_match_manifests():
    out = subprocess.run([str(EXAMPLES / "verify.sh")], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_attestation_report(lab):
    res = lab.run("attest")
    assert res.rc == 0, res
    a = res.json["attestation"]
    assert a["world"]["node"] == a["host"]["node"]
    assert a["world"]["sharedObjects"] == a["host"]["sharedObjects"]
    assert a["world"]["mountNamespace"] == a["host"]["mountNamespace"]
    assert a["cell"]["execPath"] == "/runtime/node"
    assert a["cell"]["permissionModel"] is True
    # Measured in the cell, per line (issue 33): the scopes the threat model
    # names are refused on every line; the network only from Node 26 on.
    scopes = a["cell"]["permissionScopes"]
    assert all(scopes[s] == "denied" for s in ("fs.read", "fs.write", "child", "worker")), scopes
    major = int(a["world"]["nodeVersion"].lstrip("v").split(".")[0])
    assert scopes["net"] == ("denied" if major >= 26 else "allowed"), (major, scopes)
    assert a["cell"]["version"] == a["world"]["nodeVersion"]
    for ns in ("mnt", "pid", "net", "user", "ipc", "uts"):
        own = os.readlink(f"/proc/self/ns/{ns}")
        assert a["namespaces"][ns] != own, f"cell shares the host {ns} namespace"
    assert re.fullmatch(r"[0-9a-f]{64}", a["cellLoaderSha256"])
    # Which ceilings are in force, and by what (LIMIT_DEFAULTS of the lab).
    # maxCellMemoryMb plus what the attested Node reserves at start (Node 24:
    # its 512 MiB code range), so a guest meets the same ceiling on every line.
    major = int(a["world"]["nodeVersion"].lstrip("v").split(".")[0])
    reserved = (512 << 20) if major >= 24 else 0
    assert a["ceilings"]["memoryBytes"] == {"limit": (1024 << 20) + reserved, "nodeReservedBytes": reserved,
                                            "mechanism": a["ceilings"]["memoryBytes"]["mechanism"]}
    assert "RLIMIT_DATA" in a["ceilings"]["memoryBytes"]["mechanism"]
    assert a["ceilings"]["processes"]["limit"] == 1 and "seccomp" in a["ceilings"]["processes"]["mechanism"]
    assert a["ceilings"]["cgroup"]["used"] is False
    assert a["cellWorld"] == {"hostname": "capsule", "devWritable": False}
    assert lab.leftovers() == []


def hostile_config(lab, **limits):
    _, ws, entry = lab.capsule(guest="hostile")
    return lab.config([entry], **limits), ws


def attack(lab, config, *attempts, env=None, **kw):
    res = lab.run("call", "--config", config, "hostile_probe", "--input",
                  json.dumps({"attempts": list(attempts)}), env=env, **kw)
    assert res.rc == 0, res
    return res.output


def test_state_written_in_one_call_is_gone_in_the_next(lab):
    config, _ = hostile_config(lab)
    first = attack(lab, config, {"attack": "state-write"}, {"attack": "state-read", "label": "same-cell"})
    assert first["state-write"]["ok"] and first["same-cell"]["detail"] == "from an earlier call"
    second = attack(lab, config, {"attack": "state-read"})
    assert second["state-read"] == {"ok": False, "code": "ENOENT", "message": second["state-read"]["message"]}


def test_inherited_host_descriptor_is_not_visible(lab):
    """The host is started with an open, non-CLOEXEC descriptor to a secret;
    the guest enumerates and reads raw descriptors and must find nothing."""
    config, _ = hostile_config(lab)
    fd = os.open(lab.secret, os.O_RDONLY)
    os.set_inheritable(fd, True)
    try:
        cmd = [str(BIN / "capsule-host"), "call", "--config", str(config), "hostile_probe", "--input",
               json.dumps({"attempts": [{"attack": "read-fds"}, {"attack": "fds"}]})]
        p = subprocess.run(cmd, capture_output=True, pass_fds=(fd,),
                           env={"PATH": os.environ["PATH"], "TMPDIR": str(lab.stage)})
    finally:
        os.close(fd)
    out = json.loads(p.stdout)["result"]["output"]
    assert out["read-fds"]["detail"] == "[]"
    assert "HOST-SECRET" not in p.stdout.decode()
    assert '"type":"file"' not in out["fds"]["detail"]


def test_timeout_kills_the_whole_cell(lab):
    """A guest that ignores SIGTERM and spins is SIGKILLed after processGraceMs
    and its PID namespace is joined: nothing of the cell survives."""
    _, _, entry = lab.capsule(guest="raw", params={"script": {"call": [{"ignoreTerm": True}, {"busy": True}]}})
    config = lab.config([entry], callTimeoutMs=800, processGraceMs=300)
    res = lab.run("call", "--config", config, "corpus_raw")
    assert_failed_closed(res, "CELL_CALL_TIMEOUT", lab)
    assert res.elapsed < 5, res.elapsed


def test_symlink_race_on_workspace_file_never_leaks_the_secret(lab):
    """While calls run, the granted file is swapped with a symlink to a host
    secret in a tight loop. Every call must either read the real file or fail
    closed; the secret must never appear."""
    _, ws, entry = lab.capsule(guest="hostile", manifest={"requests": [
        {"kind": "workspace-read", "path": "reference/context.txt"}]},
        workspace=[{"path": "reference/context.txt", "content": "genuine\n"}])
    config = lab.config([entry])
    target = ws / "reference" / "context.txt"
    link = ws / "reference" / ".link"
    keep = ws / "reference" / ".real"
    stop = threading.Event()
    swaps = [0]

    def swapper():
        while not stop.is_set():
            os.symlink(lab.secret, link)
            os.rename(target, keep)      # the real inode stays alive...
            os.rename(link, target)      # ...a symlink to the secret takes its name
            os.rename(keep, target)      # ...and the real inode comes back
            swaps[0] += 1

    t = threading.Thread(target=swapper)
    t.start()
    outcomes = {}
    try:
        for _ in range(25):
            res = lab.run("call", "--config", config, "hostile_probe", "--input", json.dumps(
                {"attempts": [{"attack": "read-file", "path": "/workspace/reference/context.txt", "label": "r"}]}))
            assert "HOST-SECRET" not in res.stdout + res.stderr
            key = res.code or ("read" if res.output["r"]["ok"] else res.output["r"]["code"])
            if key in ("CELL_EXITED", "ATTEST_OUTPUT_INVALID"):
                # bwrap 0.8.0's --ro-bind-fd mounts the fd's current path and
                # then re-checks the inode: a swap makes bwrap itself refuse
                # (in the first describe cell, which is also the cell probe,
                # that is an attestation failure).
                assert "stderr: bwrap: " in res.json["error"]["message"], res
                key = "bwrap-refused"
            outcomes[key] = outcomes.get(key, 0) + 1
            if res.code is None and res.output["r"]["ok"]:
                assert res.output["r"]["detail"] == "genuine\n"
    finally:
        stop.set()
        t.join()
    assert swaps[0] > 100
    allowed = {"read", "WORKSPACE_TARGET_INVALID", "LAUNCH_SOURCE_MISMATCH", "ENOENT", "bwrap-refused"}
    assert set(outcomes) <= allowed, outcomes
    assert cell_processes() == []


def test_artifact_swap_race_executes_only_verified_bytes(lab):
    """The artifact on disk flips between the pinned bytes and an evil
    variant while activations run; whatever runs must be the pinned bytes."""
    genuine = guest_artifact("lie", {"tools": [{"name": "corpus_echo", "description": "genuine"}]})
    evil = guest_artifact("lie", {"tools": [{"name": "corpus_echo", "description": "evil!!!"}]})
    assert len(genuine) == len(evil)
    root, _, entry = lab.capsule(guest="lie", artifact=genuine)
    config = lab.config([entry])
    path = root / "guest.mjs"
    stop = threading.Event()

    def flipper():
        while not stop.is_set():
            for data in (evil, genuine):
                with open(path, "r+b") as f:  # rewrite in place: same inode
                    f.write(data)

    t = threading.Thread(target=flipper)
    t.start()
    seen = {}
    try:
        for _ in range(25):
            res = lab.run("activate", "--full", "--config", config)
            if res.code:
                assert res.code == "INTEGRITY_MISMATCH", res
            else:
                assert res.json["tools"][0]["description"] == "genuine", res
            seen[res.code or "ok"] = seen.get(res.code or "ok", 0) + 1
    finally:
        stop.set()
        t.join()
    assert lab.leftovers() == []
    assert set(seen) <= {"ok", "INTEGRITY_MISMATCH"}


UNPRIV = "capsuletest"


@pytest.fixture
def unprivileged_user():
    if os.geteuid() != 0:
        return pwd.getpwuid(os.geteuid()).pw_name
    with one_worker_at_a_time("unprivileged-user"):
        try:
            pwd.getpwnam(UNPRIV)
        except KeyError:
            subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", UNPRIV],
                           check=True)
    return UNPRIV


def test_unprivileged_user_runs_echo_and_is_contained(tmp_path_factory, unprivileged_user):
    """The same cells as an ordinary user: bwrap builds an unprivileged user
    namespace, and the guest's uid is that user's, with no capabilities."""
    base = Path(subprocess.check_output(["mktemp", "-d", "/tmp/capsule-unpriv-XXXXXX"], text=True).strip())
    try:
        base.chmod(0o755)
        bindir = base / "bin"
        shutil.copytree(BIN, bindir)
        lab = Lab(base)
        lab.stage.chmod(0o777)
        _, _, echo = lab.capsule(guest="echo")
        _, _, hostile = lab.capsule(guest="hostile")
        for p in base.rglob("*"):
            p.chmod(p.stat().st_mode | 0o755 if p.is_dir() else p.stat().st_mode | 0o644)
        config = lab.config([echo, hostile], maxOldSpaceSizeMb=64, maxCellMemoryMb=256)
        config.chmod(0o644)
        uid = pwd.getpwnam(unprivileged_user).pw_uid
        res = lab.run("call", "--config", config, "corpus_echo", "--input", '{"text":"unpriv"}',
                      user=unprivileged_user, binary=bindir / "capsule-host")
        assert res.rc == 0, res
        assert res.output == {"text": "unpriv"}
        res = lab.run("call", "--config", config, "hostile_probe", "--input", json.dumps({"attempts": [
            {"attack": "uid"}, {"attack": "read-file", "path": "/etc/passwd", "label": "passwd"},
            {"attack": "spawn"}, {"attack": "hostname"},
            {"attack": "buffer-bomb", "bytes": 4 << 30, "label": "bomb"}]}),
            user=unprivileged_user, binary=bindir / "capsule-host")
        assert res.rc == 0, res
        assert res.output["uid"]["detail"] == str(uid)
        assert res.output["passwd"]["code"] == "ERR_ACCESS_DENIED"
        assert res.output["spawn"]["code"] == "ERR_ACCESS_DENIED"
        # The ceilings are rlimits and seccomp: the same for a plain user.
        assert res.output["hostname"]["detail"] == "capsule"
        # Node 20 and 22 word it "Array buffer allocation failed", Node 24
        # "Failed to allocate memory"; it stopped near the same bound on each.
        bomb = res.output["bomb"]["message"]
        assert "Array buffer allocation failed" in bomb or "Failed to allocate memory" in bomb, res.output
        assert int(re.search(r"after (\d+) bytes", bomb).group(1)) < 256 << 20, res.output
        assert os.listdir(lab.stage) == []
    finally:
        shutil.rmtree(base)


def test_errors_md_matches_the_code_list():
    header = (REPO / "common" / "cap_error.h").read_text()
    codes = re.findall(r"^\s+X\((\w+)\)", header, re.M)
    doc = (REPO / "docs" / "ERRORS.md").read_text()
    documented = re.findall(r"^### `(\w+)`", doc, re.M)
    assert documented == codes, "docs/ERRORS.md must list every code, in order"


def test_every_code_has_a_corpus_case():
    header = (REPO / "common" / "cap_error.h").read_text()
    codes = set(re.findall(r"^\s+X\((\w+)\)", header, re.M))
    doc = (REPO / "docs" / "ERRORS.md").read_text()
    sections = re.split(r"^### ", doc, flags=re.M)[1:]
    exempt = {sec.split("`")[1] for sec in sections if "**No corpus case**" in sec}
    covered = set()
    for case in (REPO / "attack-corpus" / "cases").rglob("*.json"):
        covered |= expected_codes(json.loads(case.read_text()))
    assert codes - covered == exempt, f"codes without a case: {sorted(codes - covered - exempt)}"


def test_config_defaults_are_documented_from_one_table():
    """docs/CONFIG.md's defaults, docs/DSH.md's override and the bundle row
    all equal config.c's table (`capsule-host defaults`), field for field."""
    import yaml
    from capsule_lab import LIMIT_DEFAULTS
    assert LIMIT_DEFAULTS and LIMIT_DEFAULTS["maxOldSpaceSizeMb"] == 128
    readme = (REPO / "docs" / "CONFIG.md").read_text()
    documented = json.loads(readme.split("```json\n", 1)[1].split("```", 1)[0])
    assert documented.pop("capsules") == []
    assert documented == LIMIT_DEFAULTS
    install = (REPO / "docs" / "DSH.md").read_text()
    override = yaml.safe_load(install.split("```yaml\n", 1)[1].split("```", 1)[0])[0]["config"]
    override.pop("capsules")
    assert override == LIMIT_DEFAULTS
    row = yaml.safe_load((REPO / "cordis.patch.yml").read_text())[0]["insert"][0]["config"]
    assert {k: v for k, v in row.items() if k != "capsules"} == LIMIT_DEFAULTS
    for field in LIMIT_DEFAULTS:
        assert f"`{field}`" in readme or f'"{field}"' in readme, field


@pytest.mark.parametrize("argv", [[], ["--help"], ["-h"], ["help"]])
def test_help_prints_every_command_and_exits_0(argv):
    """A newcomer's first command (issue 24.10, 48.3): the overview, one
    line a command, on stdout, exit 0; nothing on stderr. Bare capsule-host
    prints it too (it printed the usage error twice and exited 2)."""
    p = subprocess.run([str(BIN / "capsule-host"), *argv], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and p.stderr == "", p
    for command in ("attest", "activate", "call", "serve", "pin", "pack", "inspect", "keygen", "verify",
                    "doctor", "defaults", "version", "help"):
        assert f"\n  {command} " in p.stdout, command
    assert len(p.stdout.splitlines()) <= 24, p.stdout  # one screen


COMMANDS = ["attest", "activate", "call", "serve", "pin", "pack", "inspect", "keygen", "verify", "doctor",
            "defaults", "version", "help"]


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_has_its_own_help(command):
    """Issue 48.3: `COMMAND --help`, `COMMAND -h` and `help COMMAND` print that
    command alone (usage, options, an example), exit 0, nothing on stderr;
    before, every one printed the whole CLI's usage twice and exited 2."""
    outs = []
    for argv in ([command, "--help"], [command, "-h"], ["help", command]):
        p = subprocess.run([str(BIN / "capsule-host"), *argv], capture_output=True, text=True, timeout=30)
        assert p.returncode == 0 and p.stderr == "", (argv, p)
        outs.append(p.stdout)
    assert outs[0] == outs[1] == outs[2]
    text = outs[0]
    assert text.startswith(f"Usage: capsule-host {command}") and "\nExample:\n  capsule-host " in text, text
    others = [c for c in COMMANDS if c != command and f"Usage: capsule-host {c}" in text]
    assert others == [], others
    assert max(len(line) for line in text.splitlines()) <= 80 and len(text.splitlines()) <= 30, text


@pytest.mark.parametrize("argv, word", [
    (["verify", "x.json", "--key", "k.pub", "--timings"], "--timings"),
    (["defaults", "--input", "{}"], "--input"),
    (["pack", "dir", "-o", "x", "--full"], "--full"),
    (["attest", "--input", "{}"], "--input"),
    (["keygen", "--out", "k", "--out", "j"], "--out"),
    (["call", "--config", "/c.json"], "TOOL"),
    (["verify", "x.json"], "--key"),
    (["frobnicate"], "frobnicate"),
])
def test_a_command_refuses_what_it_does_not_take_naming_it(argv, word):
    """Issue 48.3: every command accepted --input and --timings; now an
    option a command does not take, given twice, or a missing argument is
    USAGE (exit 2) naming it and where the help is."""
    p = subprocess.run([str(BIN / "capsule-host"), *argv], capture_output=True, text=True, timeout=30)
    doc = json.loads(p.stdout)
    assert p.returncode == 2 and doc["error"]["code"] == "USAGE", p
    assert word in doc["error"]["message"] and "capsule-host help" in doc["error"]["message"], doc


def test_version_is_a_command():
    for argv in (["version"], ["--version"]):
        p = subprocess.run([str(BIN / "capsule-host"), *argv], capture_output=True, text=True, timeout=30)
        assert p.returncode == 0 and re.fullmatch(r"\d+\.\d+\.\d+\n", p.stdout), p


def test_the_man_page_and_completion_come_from_the_table(tmp_path):
    """capsule-host(1) and the bash completion are made from the command
    table: man renders the page with every command and every error code;
    bash loads the completion, which completes commands and a command's
    options."""
    man = subprocess.run([str(BIN / "capsule-host"), "help", "--man-page"], capture_output=True, text=True).stdout
    page = tmp_path / "capsule-host.1"
    page.write_text(man)
    if shutil.which("man"):
        shown = subprocess.run(["man", "-l", str(page)], capture_output=True, text=True,
                               env={**os.environ, "MANWIDTH": "100", "PAGER": "cat", "MAN_KEEP_FORMATTING": ""})
        assert shown.returncode == 0, shown.stderr
        text = re.sub(r".\x08", "", shown.stdout)
        for command in COMMANDS:
            assert f"capsule-host" in text and f"\n       {command}" in text, command
        assert "EXIT STATUS" in text and "WORKSPACE_ROOT_INVALID" in text and "STATEMENT_INVALID" in text
    completion = tmp_path / "capsule-host.bash"
    completion.write_text(subprocess.run([str(BIN / "capsule-host"), "help", "--bash-completion"],
                                         capture_output=True, text=True).stdout)
    script = (f"source {completion}; COMP_WORDS=(capsule-host ve); COMP_CWORD=1; _capsule_host; "
              "echo \"${COMPREPLY[*]}\"; COMP_WORDS=(capsule-host verify --k); COMP_CWORD=2; _capsule_host; "
              "echo \"${COMPREPLY[*]}\"")
    got = subprocess.run(["bash", "-c", script], capture_output=True, text=True)
    assert got.stdout.splitlines() == ["verify version", "--key"], got


def test_paths_are_taken_as_typed(lab, tmp_path):
    """Issue 48.1: `inspect echo.capsule.tar.gz` after `pack ... -o
    echo.capsule.tar.gz` was BUNDLE_OPEN (not a normalised absolute
    path). A path on the command line is made absolute against the current
    directory once, at the boundary; ./ and .. are read as a shell would."""
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    run = lambda *a: subprocess.run([str(BIN / "capsule-host"), *a], cwd=work / "sub", capture_output=True,
                                    text=True, timeout=60)
    packed = run("pack", str(REPO / "examples" / "echo-capsule"), "-o", "../echo.capsule.tar.gz")
    assert packed.returncode == 0, packed
    assert json.loads(packed.stdout)["bundle"] == str(work / "echo.capsule.tar.gz")
    for path in ("../echo.capsule.tar.gz", "./../sub/../echo.capsule.tar.gz"):
        seen = run("inspect", path)
        assert seen.returncode == 0 and json.loads(seen.stdout)["manifest"]["id"] == "example.echo", seen
    made = run("keygen", "--out", "keys-gate")
    assert made.returncode == 0 and (work / "sub" / "keys-gate.key").exists(), made


def test_pin_writes_the_artifact_s_digest(tmp_path):
    """Issue 48.2: after a rebuild, `capsule-host pin DIR` writes the
    artifact's digest into capsule.json (nobody edits hashes by hand); a
    second pin changes nothing."""
    cap = tmp_path / "cap"
    shutil.copytree(REPO / "examples" / "echo-capsule", cap)
    with open(cap / "guest.mjs", "a") as f:
        f.write("\n// rebuilt\n")
    want = hashlib.sha256((cap / "guest.mjs").read_bytes()).hexdigest()
    old = json.loads((cap / "capsule.json").read_text())["integrity"]["sha256"]
    p = subprocess.run([str(BIN / "capsule-host"), "pin", str(cap)], capture_output=True, text=True)
    doc = json.loads(p.stdout)
    assert p.returncode == 0 and doc["sha256"] == want and doc["previousSha256"] == old and doc["changed"], p
    manifest = json.loads((cap / "capsule.json").read_text())
    assert manifest["integrity"]["sha256"] == want and list(manifest)[0] == "protocol"
    again = json.loads(subprocess.run([str(BIN / "capsule-host"), "pin", str(cap)], capture_output=True,
                                      text=True).stdout)
    assert again["changed"] is False and sorted(p.name for p in cap.iterdir()) == [
        "capsule.json", "guest.mjs", "source.mjs"]


def test_a_newcomer_s_mistakes_get_errors_that_name_the_fix(lab, tmp_path):
    """Issue 48.5: each mistake on the README's path is refused with its
    code and a message that says what to do instead."""
    key = tmp_path / "gate"
    assert lab.run("keygen", "--out", key).rc == 0
    config = example_config(lab)
    out = tmp_path / "statements"
    assert lab.run("attest", "--statement", out, "--key", f"{key}.key").rc == 0
    # The unsigned payload given to verify.
    res = lab.run("verify", out / "world.intoto.json", "--key", f"{key}.pub")
    assert res.code == "ENVELOPE_INVALID" and "world.dsse.json" not in res.json["error"]["message"]
    assert "unsigned in-toto statement" in res.json["error"]["message"] and ".dsse.json" in res.json["error"]["message"]
    # The private key given to verify, the public one to sign.
    res = lab.run("verify", out / "world.dsse.json", "--key", f"{key}.key")
    assert res.code == "KEY_INVALID" and "pass the .pub" in res.json["error"]["message"], res
    assert "PRIVATE" not in res.stdout + res.stderr
    res = lab.run("attest", "--statement", tmp_path / "s2", "--key", f"{key}.pub")
    assert res.code == "KEY_INVALID" and "pass the .key" in res.json["error"]["message"], res
    # A tool that does not exist: the ones that do.
    res = lab.run("call", "--config", config, "capsule_ecoh")
    assert res.code == "TOOL_NOT_FOUND" and "capsule_echo, capsule_read" in res.json["error"]["message"], res
    # A relative path in a config: what it probably meant.
    rel = tmp_path / "rel.json"
    rel.write_text(json.dumps({"capsules": [{"root": "./echo-capsule", "policy": {
        "capsuleId": "example.echo", "tools": ["capsule_echo"], "promptSections": ["capsule.echo.guidance"],
        "grants": []}}]}))
    res = lab.run("activate", "--config", rel)
    assert res.code == "CAPSULE_ROOT_INVALID", res
    assert f"did you mean {tmp_path}/echo-capsule?" in res.json["error"]["message"], res
    # A stale digest: the digest the artifact has, and the command that pins it.
    cap = tmp_path / "echo-capsule"
    shutil.copytree(EXAMPLES / "echo-capsule", cap)
    with open(cap / "guest.mjs", "a") as f:
        f.write("\n")
    rel.write_text(rel.read_text().replace('"./echo-capsule"', json.dumps(str(cap))))
    res = lab.run("activate", "--config", rel)
    have = hashlib.sha256((cap / "guest.mjs").read_bytes()).hexdigest()
    assert res.code == "INTEGRITY_MISMATCH" and have in res.json["error"]["message"], res
    assert "capsule-host pin DIR" in res.json["error"]["message"]
    assert lab.leftovers() == []
