"""make dist (issue 52): the source release is reproducible (two runs with
one SOURCE_DATE_EPOCH give the same bytes, whatever the clock and umask),
holds exactly the commit's files, and carries a release statement that our
`verify --subject` and Sigstore's own verifier accept, and that both refuse
for a tarball that is not the one signed."""
import json
import os
import subprocess
import tarfile
import time

import pytest

from capsule_lab import BIN, REPO
from test_statements import sigstore  # noqa: F401  (the pinned @sigstore/verify)

HOST = BIN / "capsule-host"
EPOCH = "1765000000"


def dist(out, key=None, umask=0o022):
    env = {**os.environ, "SOURCE_DATE_EPOCH": EPOCH}
    p = subprocess.run(["bash", "-c", f"umask {umask:o} && exec ci/dist.sh \"$@\"", "dist", str(HOST), str(out),
                        *([str(key)] if key else [])], cwd=REPO, env=env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    version = subprocess.run([str(HOST), "version"], capture_output=True, text=True).stdout.strip()
    return out / f"dsh-capsule-{version}.tar.gz", version


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    top = tmp_path_factory.mktemp("dist")
    keys = top / "keys"
    made = subprocess.run([str(HOST), "keygen", "--out", str(keys / "release")], capture_output=True, text=True)
    assert made.returncode == 0, made.stdout
    tarball, version = dist(top / "a", key=keys / "release.key")
    return top, tarball, version, keys / "release.pub"


def test_two_runs_give_the_same_bytes(release):
    top, tarball, _, _ = release
    time.sleep(1.1)  # another second on the clock, another umask: nothing of either may show
    again, _ = dist(top / "b", umask=0o077)
    assert tarball.read_bytes() == again.read_bytes()
    assert (top / "a" / f"{tarball.name}.sha256").read_text() == (top / "b" / f"{tarball.name}.sha256").read_text()


def test_the_tarball_holds_exactly_the_commits_files(release):
    _, tarball, version, _ = release
    tracked = subprocess.run(["git", "ls-files", "-z", "--with-tree=HEAD"], cwd=REPO, capture_output=True,
                             text=True, check=True).stdout.split("\0")
    committed = subprocess.run(["git", "ls-tree", "-r", "-z", "--name-only", "HEAD"], cwd=REPO,
                               capture_output=True, text=True, check=True).stdout.split("\0")
    with tarfile.open(tarball) as t:
        members = t.getmembers()
    files = {m.name.split("/", 1)[1] for m in members if m.isfile() or m.issym()}
    assert files == {f for f in committed if f}, sorted(files ^ {f for f in committed if f})[:10]
    assert tracked  # the checkout is a git clone, as make dist needs
    prefix = f"dsh-capsule-{version}"
    for m in members:
        assert m.name == prefix or m.name.startswith(prefix + "/"), m.name
        assert (m.uid, m.gid, m.uname, m.gname) == (0, 0, "", ""), m.name
        assert m.mtime == int(EPOCH), m.name
        assert m.mode & 0o022 == 0, (m.name, oct(m.mode))


def test_the_release_statement_verifies_with_ours_and_sigstores(release, sigstore):  # noqa: F811
    top, tarball, version, pub = release
    files = sorted(p.name for p in (top / "a").iterdir())
    assert files == sorted([tarball.name, f"{tarball.name}.sha256", f"{tarball.name}.intoto.json",
                            f"{tarball.name}.dsse.json", f"{tarball.name}.sigstore.json"])
    statement = json.loads((top / "a" / f"{tarball.name}.intoto.json").read_text())
    assert statement["predicateType"] == "https://dsh-capsule.dev/release/v1"
    assert statement["predicate"] == {"product": "dsh-capsule", "version": version,
                                      "sourceDateEpoch": int(EPOCH)}
    sha = (top / "a" / f"{tarball.name}.sha256").read_text().split()[0]
    assert statement["subject"] == [{"name": tarball.name, "digest": {"sha256": sha}}]
    for signed in (f"{tarball.name}.dsse.json", f"{tarball.name}.sigstore.json"):
        p = subprocess.run([str(HOST), "verify", str(top / "a" / signed), "--key", str(pub), "--subject",
                            str(tarball)], capture_output=True, text=True)
        assert p.returncode == 0 and json.loads(p.stdout)["verified"] is True, p.stdout
        assert sigstore(top / "a" / signed, pub) == {"ok": True}


def test_a_tarball_that_is_not_the_signed_one_is_refused(release, tmp_path):
    top, tarball, _, pub = release
    forged = tmp_path / tarball.name
    data = tarball.read_bytes()
    forged.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    p = subprocess.run([str(HOST), "verify", str(top / "a" / f"{tarball.name}.dsse.json"), "--key", str(pub),
                        "--subject", str(forged)], capture_output=True, text=True)
    assert p.returncode == 1 and json.loads(p.stdout)["error"]["code"] == "SUBJECT_MISMATCH", p.stdout
    other = tmp_path / "other.tar.gz"
    other.write_bytes(tarball.read_bytes())
    p = subprocess.run([str(HOST), "verify", str(top / "a" / f"{tarball.name}.dsse.json"), "--key", str(pub),
                        "--subject", str(other)], capture_output=True, text=True)
    assert p.returncode == 1 and json.loads(p.stdout)["error"]["code"] == "SUBJECT_MISMATCH", p.stdout
    assert "names no subject other.tar.gz" in json.loads(p.stdout)["error"]["message"]


def test_sign_release_needs_the_release_date(tmp_path):
    (tmp_path / "x.tar.gz").write_bytes(b"x")
    for epoch in (None, "", "yesterday", "-1", "1e9", "12 "):
        env = {k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}
        if epoch is not None:
            env["SOURCE_DATE_EPOCH"] = epoch
        p = subprocess.run([str(HOST), "sign-release", str(tmp_path / "x.tar.gz"), "--statement",
                            str(tmp_path / "out")], env=env, capture_output=True, text=True)
        assert p.returncode == 2 and json.loads(p.stdout)["error"]["code"] == "USAGE", (epoch, p.stdout)
        assert not (tmp_path / "out").exists()  # refused before anything was made
