"""A new user's way in, as the README writes it (issues 48 and 52): the host
installed with `make install DESTDIR=...` and moved aside (no path into the
repository but the installed tree and the packed SDK), the README's quick
start run line by line as written, in an empty scratch directory, then a
guest written against the packed SDK, built with esbuild, pinned and called,
then `make uninstall`, which leaves no file behind."""
import json
import os
import re
import shutil
import subprocess
import time

import pytest

from capsule_lab import BIN, REPO, cell_processes, one_worker_at_a_time

pytestmark = pytest.mark.xdist_group("install")


def quick_start_lines():
    """The commands between the README's quick-start markers."""
    text = (REPO / "README.md").read_text()
    block = text.split("<!-- quick-start", 1)[1].split("<!-- end quick-start -->", 1)[0]
    code = block.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line for line in code.splitlines() if line.strip() and not line.startswith("#")]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """make install into a DESTDIR (the build the tests run), then the tree
    moved elsewhere: an installed host works from wherever it lies."""
    build = BIN.parent
    top = tmp_path_factory.mktemp("install")
    with one_worker_at_a_time("unit-build"):  # one make at a time in the shared build
        made = subprocess.run(["make", "-s", "-C", str(REPO), f"BUILD={build}",
                               f"SANITIZE={'1' if build.name == 'asan' else '0'}", "install",
                               f"DESTDIR={top / 'dest'}", "PREFIX=/usr"], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr[-2000:]
    (top / "dest").rename(top / "moved")
    return top / "moved"


@pytest.fixture(scope="module")
def sdk_tarball(tmp_path_factory):
    out = tmp_path_factory.mktemp("sdk")
    p = subprocess.run(["npm", "pack", "--pack-destination", str(out), str(REPO / "guest")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    tarball = out / p.stdout.strip().splitlines()[-1]
    assert tarball.exists(), p.stdout
    return tarball


def user_env(installed, home):
    return {"PATH": f"{installed / 'usr' / 'bin'}:{os.environ['PATH']}", "HOME": str(home),
            "TMPDIR": os.environ.get("TMPDIR", "/tmp"), "npm_config_cache": str(home / ".npm"),
            "npm_config_update_notifier": "false", "npm_config_fund": "false", "npm_config_audit": "false"}


def test_make_install_lays_out_the_host_and_its_manual(installed):
    usr = installed / "usr"
    files = sorted(str(p.relative_to(usr)) for p in usr.rglob("*") if p.is_file())
    assert files == ["bin/capsule-host", "libexec/dsh-capsule/capsule-launcher",
                     "libexec/dsh-capsule/capsule-probe", "share/bash-completion/completions/capsule-host",
                     "share/doc/dsh-capsule/ERRORS.md", "share/doc/dsh-capsule/README.md",
                     "share/doc/dsh-capsule/RFC.md", "share/doc/dsh-capsule/THREAT_MODEL.md",
                     "share/man/man1/capsule-host.1"], files
    assert (usr / "share/man/man1/capsule-host.1").read_text().startswith(".TH CAPSULE-HOST 1")


def test_the_readme_quick_start_runs_as_written(installed, sdk_tarball, tmp_path):
    """Each line exits 0, from an empty directory outside the repository,
    with only the installed host on PATH; each answer fits a screen."""
    work = tmp_path / "work"
    work.mkdir()
    env = user_env(installed, tmp_path)
    started = time.monotonic()
    lines = quick_start_lines()
    assert len(lines) >= 6 and all(line.startswith("capsule-host ") for line in lines), lines
    for line in lines:
        p = subprocess.run(["bash", "-c", line], cwd=work, env=env, capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, (line, p.stdout[-2000:], p.stderr[-2000:])
        assert len(p.stdout.splitlines()) <= 40, (line, len(p.stdout.splitlines()))
        assert str(REPO) not in p.stdout, line  # nothing reached into the checkout
    verified = json.loads(p.stdout)
    assert verified["verified"] is True and verified["predicateType"] == "https://slsa.dev/verification_summary/v1"

    # Write a guest: the SDK from its packed tarball, esbuild, pin, call.
    hello = work / "hello"
    npm = subprocess.run(["npm", "install", str(sdk_tarball), "esbuild@0.28.2"], cwd=hello, env=env,
                         capture_output=True, text=True, timeout=600)
    assert npm.returncode == 0, npm.stderr[-2000:]
    types = (hello / "node_modules" / "dsh-capsule-guest" / "index.d.ts").read_text()
    assert "export function runCapsuleGuest" in types
    src = hello / "src" / "guest.mjs"
    src.write_text(src.read_text().replace("({ words: text.split(/\\s+/).filter(Boolean).length })",
                                           "({ words: text.split(/\\s+/).filter(Boolean).length, chars: text.length })"))
    built = subprocess.run(["npm", "run", "build"], cwd=hello, env=env, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    pinned = json.loads(built.stdout[built.stdout.index("{"):])
    assert pinned["changed"] is True, pinned
    call = subprocess.run(["capsule-host", "call", "--config", "hello/capsules.json", "word_count", "--input",
                           '{"text": "two words"}'], cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert call.returncode == 0 and json.loads(call.stdout)["result"]["output"] == {"words": 2, "chars": 9}, call
    print(f"quick start and a rebuilt guest: {time.monotonic() - started:.1f} s")
    assert cell_processes() == []


def test_make_uninstall_leaves_no_file(installed, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(installed, copy, symlinks=True)
    with one_worker_at_a_time("unit-build"):
        p = subprocess.run(["make", "-s", "-C", str(REPO), f"BUILD={BIN.parent}", "uninstall",
                            f"DESTDIR={copy}", "PREFIX=/usr"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert [str(f) for f in copy.rglob("*") if not f.is_dir()] == []
    assert not (copy / "usr" / "libexec" / "dsh-capsule").exists()


def test_an_installed_host_refuses_without_its_helpers(installed, tmp_path):
    """Copying the binary alone is refused with where the helpers belong."""
    alone = tmp_path / "bin"
    alone.mkdir()
    shutil.copy(installed / "usr" / "bin" / "capsule-host", alone)
    p = subprocess.run([str(alone / "capsule-host"), "attest"], capture_output=True, text=True, timeout=60)
    doc = json.loads(p.stdout)
    assert p.returncode == 1 and doc["error"]["code"] == "LAUNCH_FAILED", doc
    assert re.search(r"libexec/dsh-capsule", doc["error"]["message"]) and "make install" in doc["error"]["message"]
