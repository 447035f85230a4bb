"""The Debian package (issue 52): dpkg-buildpackage -us -uc -b builds it
from the committed tree, lintian --pedantic reports nothing, it holds
exactly the install's files, and its maintainer scripts write and load the
AppArmor profile only where the kernel restricts user namespaces through
AppArmor, and take it away again on remove. The maintainer scripts run
under bwrap with a made-up /proc/sys/kernel, /etc and AppArmor tools that
record their arguments: the real machine's are never touched. Installing,
running as a user and purging on fresh Debian 12 and 13 is `make worlds
WORLDS="deb12 deb13"` (ci/worlds/package-world.sh)."""
import os
import shutil
import subprocess

import pytest

from capsule_lab import REPO

pytestmark = pytest.mark.xdist_group("debian-package")

EXPECTED = """./usr/bin/capsule-host
./usr/libexec/dsh-capsule/capsule-launcher
./usr/libexec/dsh-capsule/capsule-probe
./usr/share/bash-completion/completions/capsule-host
./usr/share/doc/dsh-capsule/ERRORS.md.gz
./usr/share/doc/dsh-capsule/README.Debian
./usr/share/doc/dsh-capsule/README.md.gz
./usr/share/doc/dsh-capsule/RFC.md.gz
./usr/share/doc/dsh-capsule/THREAT_MODEL.md.gz
./usr/share/doc/dsh-capsule/changelog.gz
./usr/share/doc/dsh-capsule/copyright
./usr/share/dsh-capsule/apparmor/dsh-capsule
./usr/share/man/man1/capsule-host.1.gz""".split()


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    top = tmp_path_factory.mktemp("deb")
    src = top / "src"
    if (REPO / ".git").exists():  # the source as a checkout holds it, builds excluded
        files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO,
                               capture_output=True, check=True).stdout
        src.mkdir()
        subprocess.run(["tar", "--null", "-T", "-", "-cf", str(top / "tree.tar")], cwd=REPO, input=files, check=True)
        subprocess.run(["tar", "-xf", str(top / "tree.tar"), "-C", str(src)], check=True)
    else:  # make prove-fixes' scratch copy has no .git
        shutil.copytree(REPO, src, symlinks=True, ignore=shutil.ignore_patterns("build", "node_modules"))
    p = subprocess.run(["dpkg-buildpackage", "-us", "-uc", "-b"], cwd=src, capture_output=True, text=True,
                       timeout=900, env={**os.environ, "MAKEFLAGS": "-j2"})
    assert p.returncode == 0, (p.stdout + p.stderr)[-3000:]
    debs = sorted(top.glob("dsh-capsule_*_amd64.deb"))
    assert len(debs) == 1, list(top.iterdir())
    control = top / "control"
    subprocess.run(["dpkg-deb", "-e", str(debs[0]), str(control)], check=True)
    data = top / "data"
    subprocess.run(["dpkg-deb", "-x", str(debs[0]), str(data)], check=True)
    return {"deb": debs[0], "changes": debs[0].with_suffix(".changes"), "control": control, "data": data,
            "top": top}


def test_it_holds_exactly_the_install_and_depends_on_bwrap(package):
    listing = subprocess.run(["dpkg-deb", "-c", str(package["deb"])], capture_output=True, text=True,
                             check=True).stdout
    files = sorted(line.split()[-1] for line in listing.splitlines() if not line.startswith("d"))
    assert files == EXPECTED
    fields = subprocess.run(["dpkg-deb", "-f", str(package["deb"]), "Depends", "Architecture"],
                            capture_output=True, text=True, check=True).stdout
    assert "bubblewrap" in fields and "libseccomp2" in fields and "libjansson4" in fields, fields
    assert "nodejs" not in fields  # README.Debian: Debian's nodejs cannot run cells
    helpers = package["data"] / "usr/libexec/dsh-capsule"
    assert sorted(p.name for p in helpers.iterdir()) == ["capsule-launcher", "capsule-probe"]
    version = subprocess.run([str(package["data"] / "usr/bin/capsule-host"), "version"], capture_output=True,
                             text=True, check=True).stdout.strip()
    assert package["deb"].name == f"dsh-capsule_{version}_amd64.deb"


def test_lintian_reports_nothing(package):
    p = subprocess.run(["lintian", "--pedantic", "--info", "--display-experimental", str(package["changes"])],
                       capture_output=True, text=True, timeout=600)
    tags = [line for line in (p.stdout + p.stderr).splitlines() if "running with root privileges" not in line]
    assert tags == [], "\n".join(tags)


FAKE_PARSER = """#!/bin/sh
echo "apparmor_parser $*" >> /tmp/record/calls
[ -e /tmp/record/parser-fails ] && exit 1
exit 0
"""


def maintainer_script(package, tmp_path, script, arg, restricted, apparmor_enabled=True, parser_fails=False):
    """Runs postinst/postrm ARG under bwrap: / read-only, /etc an empty
    folder of the test's, /proc/sys/kernel a tmpfs holding the AppArmor
    userns sysctl when `restricted`, fake aa-enabled and apparmor_parser
    first on PATH. Returns (exit status, stderr, calls, /etc as left)."""
    etc, record, tools, sysctl = tmp_path / "etc", tmp_path / "record", tmp_path / "tools", tmp_path / "sysctl"
    for d in (etc, record, tools):
        d.mkdir(parents=True, exist_ok=True)
    (etc / "apparmor.d").mkdir(exist_ok=True)
    (tools / "apparmor_parser").write_text(FAKE_PARSER)
    (tools / "aa-enabled").write_text(f"#!/bin/sh\nexit {0 if apparmor_enabled else 1}\n")
    for t in tools.iterdir():
        t.chmod(0o755)
    sysctl.write_text("1\n")
    if parser_fails:
        (record / "parser-fails").write_text("")
    cmd = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--bind", "/proc", "/proc",
           "--tmpfs", "/proc/sys/kernel", "--bind", str(etc), "/etc", "--tmpfs", "/usr/share",
           "--ro-bind", str(package["data"] / "usr/share/dsh-capsule"), "/usr/share/dsh-capsule",
           "--tmpfs", "/tmp", "--bind", str(record), "/tmp/record", "--ro-bind", str(tools), "/tmp/fake-tools",
           "--unshare-pid", "--die-with-parent"]
    if restricted:
        cmd += ["--ro-bind", str(sysctl), "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"]
    cmd += ["--ro-bind", str(package["control"] / script), "/tmp/script", "--clearenv",
            "--setenv", "PATH", "/tmp/fake-tools:/usr/sbin:/usr/bin:/sbin:/bin", "/bin/sh", "/tmp/script", arg]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    calls = (record / "calls").read_text().splitlines() if (record / "calls").exists() else []
    return p.returncode, p.stderr, calls, etc


def test_postinst_writes_and_loads_the_profile_only_where_userns_is_restricted(package, tmp_path):
    source = (package["data"] / "usr/share/dsh-capsule/apparmor/dsh-capsule").read_bytes()
    rc, err, calls, etc = maintainer_script(package, tmp_path / "debian", "postinst", "configure", restricted=False)
    assert (rc, calls, list((etc / "apparmor.d").iterdir())) == (0, [], []), err
    rc, err, calls, etc = maintainer_script(package, tmp_path / "disabled", "postinst", "configure",
                                            restricted=True, apparmor_enabled=False)
    assert (rc, calls, list((etc / "apparmor.d").iterdir())) == (0, [], []), err
    rc, err, calls, etc = maintainer_script(package, tmp_path / "ubuntu", "postinst", "configure", restricted=True)
    assert rc == 0, err
    assert calls == ["apparmor_parser --replace --write-cache /etc/apparmor.d/dsh-capsule"]
    assert (etc / "apparmor.d" / "dsh-capsule").read_bytes() == source
    assert oct((etc / "apparmor.d" / "dsh-capsule").stat().st_mode & 0o777) == "0o644"
    # postrm remove: unloaded, then removed; nothing else in /etc/apparmor.d touched.
    (etc / "apparmor.d" / "local").mkdir()
    (etc / "apparmor.d" / "local" / "dsh-capsule").write_text("# the site's own\n")
    (tmp_path / "ubuntu" / "record" / "calls").unlink()
    rc, err, calls, etc = maintainer_script(package, tmp_path / "ubuntu", "postrm", "remove", restricted=True)
    assert rc == 0, err
    assert calls == ["apparmor_parser --remove /etc/apparmor.d/dsh-capsule"]
    assert not (etc / "apparmor.d" / "dsh-capsule").exists()
    assert (etc / "apparmor.d" / "local" / "dsh-capsule").read_text() == "# the site's own\n"


def test_a_profile_that_does_not_load_does_not_fail_the_install(package, tmp_path):
    rc, err, calls, etc = maintainer_script(package, tmp_path, "postinst", "configure", restricted=True,
                                            parser_fails=True)
    assert rc == 0 and "was not loaded" in err and "capsule-host doctor" in err, err
    assert calls == ["apparmor_parser --replace --write-cache /etc/apparmor.d/dsh-capsule"]


def test_the_profile_names_the_installed_paths(package):
    profile = (package["data"] / "usr/share/dsh-capsule/apparmor/dsh-capsule").read_text()
    assert "profile dsh-capsule /usr/{bin/capsule-host,libexec/dsh-capsule/capsule-launcher} " \
           "flags=(unconfined)" in profile
    assert "\n  userns,\n" in profile
    for path in ("usr/bin/capsule-host", "usr/libexec/dsh-capsule/capsule-launcher"):
        assert (package["data"] / path).is_file()
    assert shutil.which("bwrap")
