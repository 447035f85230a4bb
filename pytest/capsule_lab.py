"""Test-side helpers: build capsules, configs and workspaces in a temp dir,
run the real binaries, and check that nothing was left behind.

Nothing here mocks bwrap: every cell is a real launcher -> bwrap -> node."""
import contextlib
import copy
import fcntl
import hashlib
import json
import os
import socket
import stat
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(os.environ.get("CAPSULE_BIN", REPO / "build" / "bin"))
CORPUS = REPO / "attack-corpus"
SDK = (REPO / "guest" / "index.mjs").read_text()


@contextlib.contextmanager
def one_worker_at_a_time(name):
    """Held while a shared thing in the tree (an npm install, a test helper
    binary, a fetched source) is checked and made: `make test` runs pytest
    workers side by side (pytest -n), and the second must wait for the
    first one's install instead of writing the same files at once."""
    locks = REPO / "build" / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    with open(locks / f"{name}.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        yield


def npm_ci_once(folder, *wanted):
    """A test folder's pinned npm packages (its package-lock.json), installed
    by one worker when any of wanted (paths below its node_modules) is
    missing; a failed install fails the test, it never skips."""
    modules = folder / "node_modules"
    with one_worker_at_a_time(folder.name):
        if not all((modules / w).exists() for w in wanted):
            subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--prefix", str(folder)],
                           check=True, capture_output=True)
    return modules


def config_defaults():
    """The config table from config.c itself (`capsule-host defaults`): the
    one source the tests, README and cordis.patch.yml are checked against."""
    try:
        out = subprocess.run([str(BIN / "capsule-host"), "defaults"], capture_output=True,
                             check=True, timeout=30)
    except (OSError, subprocess.CalledProcessError):
        return {}  # conftest reports the missing binary
    return json.loads(out.stdout)["defaults"]


LIMIT_DEFAULTS = config_defaults()


def expected_codes(case: dict) -> set:
    """Every error code a corpus case expects: its outcome, or for serve
    scenarios the codes its responses must carry."""
    expect = case["expect"]
    codes = {expect["code"]} if "code" in expect else set()
    for want in expect.get("responses", {}).values():
        codes |= {want[k] for k in ("errorData", "resultError") if k in want}
    return codes


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def guest_artifact(name: str, params=None) -> bytes:
    """The SDK and one corpus guest in a single ESM file, as esbuild would."""
    body = (CORPUS / "guests" / f"{name}.mjs").read_text()
    prelude = f"const CASE = {json.dumps(params or {})};\n"
    return (SDK + "\n" + prelude + body).encode()


def guest_contributes(name: str) -> dict:
    first = (CORPUS / "guests" / f"{name}.mjs").read_text().splitlines()[0]
    assert first.startswith("// contributes: "), f"{name}.mjs must declare contributes"
    return json.loads(first[len("// contributes: "):])


def merge(base, patch):
    """JSON merge patch (RFC 7386): null deletes a key."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(base) if isinstance(base, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge(out.get(k), v)
    return out


def make_special(path: Path, kind: str, target=None, content="workspace text\n"):
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "file":
        path.write_text(content)
    elif kind == "dir":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(str(path))
        s.listen(1)
        return s
    elif kind in ("chardev", "blockdev") and os.geteuid() != 0:
        import pytest
        pytest.skip(f"creating a {kind} needs CAP_MKNOD (root); run as root to cover this case")
    elif kind == "chardev":
        os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null's numbers
    elif kind == "blockdev":
        os.mknod(path, 0o600 | stat.S_IFBLK, os.makedev(7, 0))
    elif kind == "symlink":
        os.symlink(target, path)
    elif kind == "hardlink":
        os.link(target, path)
    else:
        raise ValueError(kind)
    return None


class Lab:
    """One test's world: capsule roots, workspace, staging dir, a host secret."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.stage = tmp / "stage"
        self.stage.mkdir()
        self.secret = tmp / "host-secret.txt"
        self.secret.write_text("HOST-SECRET-7f3a\n")
        self.keep = []  # sockets that must stay open, serves: ended at teardown
        self.count = 0
        self.vars = {"$PYTESTPID": str(os.getpid())}

    def capsule(self, guest="echo", params=None, manifest=None, policy=None, artifact=None,
                integrity="auto", workspace=None, capsule_config=None, contributes=None):
        self.count += 1
        root = self.tmp / f"capsule{self.count}"
        root.mkdir()
        data = artifact if artifact is not None else guest_artifact(guest, params)
        (root / "guest.mjs").write_bytes(data)
        contrib = contributes or guest_contributes(guest)
        m = {
            "protocol": "dsh-capsule/0",
            "id": f"corpus.case{self.count}",
            "entry": "./guest.mjs",
            "integrity": {"sha256": {"auto": sha256(data), "upper": sha256(data).upper(),
                                     "short": sha256(data)[:63]}.get(integrity, integrity)},
            "contributes": contrib,
            "requests": [],
        }
        m = merge(m, manifest or {})
        (root / "capsule.json").write_text(json.dumps(m))
        ws = self.tmp / f"workspace{self.count}"
        ws.mkdir()
        for entry in workspace or []:
            s = make_special(ws / entry["path"], entry.get("type", "file"),
                             self.subst(entry.get("target"), root, ws),
                             entry.get("content", "workspace text\n"))
            if s:
                self.keep.append(s)
        requests = m.get("requests", []) if isinstance(m.get("requests"), list) else []
        pol = {
            "capsuleId": m.get("id") if isinstance(m.get("id"), str) else "x",
            "tools": contrib.get("tools", []),
            "promptSections": contrib.get("promptSections", []),
            "grants": [r for r in requests if isinstance(r, dict)],
        }
        entry = {"root": str(root), "manifest": "capsule.json", "workspaceRoot": str(ws),
                 "policy": merge(pol, policy or {})}
        entry = merge(entry, self.subst(capsule_config or {}, root, ws))
        return root, ws, entry

    def subst(self, value, root, ws):
        if isinstance(value, str):
            for key, repl in self.vars.items():
                value = value.replace(key, repl)
            return (value.replace("$ROOT", str(root)).replace("$WS", str(ws))
                    .replace("$SECRET", str(self.secret)).replace("$TMP", str(self.tmp)))
        if isinstance(value, list):
            return [self.subst(v, root, ws) for v in value]
        if isinstance(value, dict):
            return {k: self.subst(v, root, ws) for k, v in value.items()}
        return value

    def config(self, capsules, **limits):
        cfg = dict(LIMIT_DEFAULTS)
        cfg.update(limits)
        cfg["capsules"] = capsules
        path = self.tmp / f"config{self.count}-{len(capsules)}.json"
        path.write_text(json.dumps(cfg))
        return path

    def run(self, *args, env=None, timeout=120, user=None, binary=None):
        e = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TMPDIR": str(self.stage)}
        e.update(env or {})
        cmd = [str(binary or BIN / "capsule-host"), *map(str, args)]
        t0 = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, env=e, timeout=timeout, user=user)
        elapsed = time.monotonic() - t0
        try:
            out = json.loads(p.stdout)
        except ValueError:
            out = None
        return Result(p.returncode, out, p.stdout.decode(errors="replace"),
                      p.stderr.decode(errors="replace"), elapsed)

    def leftovers(self):
        return sorted(os.listdir(self.stage))


class Result:
    def __init__(self, rc, json_out, stdout, stderr, elapsed):
        self.rc, self.json, self.stdout, self.stderr, self.elapsed = rc, json_out, stdout, stderr, elapsed

    @property
    def code(self):
        if self.json and not self.json.get("ok"):
            return self.json["error"]["code"]
        return None

    @property
    def output(self):
        return self.json["result"]["output"]

    def __repr__(self):
        return f"Result(rc={self.rc}, stdout={self.stdout[:2000]!r}, stderr={self.stderr[-2000:]!r})"


def _make_this_run_a_subreaper():
    """Orphans of this test run (a cell whose host died) are reparented to
    this process instead of init, so "what this run started" is exactly the
    process tree below it: a second checkout's suite, a serve in use or a
    second CI job on the machine is never counted (nor touched)."""
    import ctypes
    PR_SET_CHILD_SUBREAPER = 36
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


_make_this_run_a_subreaper()


def _own_processes():
    """(pid, argv) of every live process below this one."""
    parent, argv = {}, {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            argv[int(pid)] = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        parent[int(pid)] = int(stat.rsplit(")", 1)[1].split()[1])
    me, own = os.getpid(), []
    for pid in argv:
        p, seen = parent.get(pid), 0
        while p and p != me and seen < 4096:
            p, seen = parent.get(p), seen + 1
        if p == me:
            own.append((pid, argv[pid]))
    return own


def cell_processes():
    """Processes of this run that belong to a cell or a launcher: none may
    outlive a run. By name, wherever they run from: the snapshot build
    starts bwrap by its path."""
    return [(pid, cmd) for pid, cmd in _own_processes()
            if cmd and (cmd[0] == b"/runtime/node" or os.path.basename(cmd[0]) in
                        (b"bwrap", b"capsule-launcher", b"capsule-probe"))]


def host_processes():
    """Running `capsule-host serve` processes (of any build) this run started:
    the DSH row's hosts."""
    return [str(pid) for pid, cmd in _own_processes()
            if cmd and cmd[0].endswith(b"capsule-host") and b"serve" in cmd]


def assert_failed_closed(res: Result, code: str, lab: Lab):
    assert res.code == code, res
    assert res.rc == (2 if code == "USAGE" else 1), res
    assert "tools" not in res.json and "result" not in res.json, "nothing may be published"
    assert res.stderr.startswith(f"capsule-host: {code}: "), res
    assert lab.leftovers() == [], f"staging left behind: {lab.leftovers()}"
    assert cell_processes() == [], f"cell processes survived: {cell_processes()}"


def copy_working_tree(dest):
    """The repository's tracked files and new untracked ones (not ignored),
    as they are in the working tree, copied below dest."""
    import shutil
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO,
                            check=True, capture_output=True).stdout.split(b"\0")
    for rel in filter(None, listed):
        src = REPO / rel.decode()
        if src.is_file():
            (dest / rel.decode()).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel.decode())
