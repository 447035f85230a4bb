"""The build (issue 51): each object depends on the headers it includes, as
the compiler found them (-MMD -MP), not on every header of the tree:
touching one header rebuilds exactly the objects whose sources include it,
directly or through another header. Run in a copy of the sources with its
own build folder, so that no other test's build sees a header touched."""
import os
import re
import shutil
import subprocess
import time

import pytest

from capsule_lab import REPO

pytestmark = pytest.mark.xdist_group("unit-build")


def compiled(out):
    """The sources a make run compiled (its -c lines)."""
    return sorted(m.group(1) for m in re.finditer(r" -c (\S+\.c) -o ", out))


def test_touching_a_header_rebuilds_only_its_users(tmp_path):
    tree = tmp_path / "src"
    for top in ("common", "host", "launcher", "probe", "guest", "Makefile"):
        src = REPO / top
        (shutil.copytree(src, tree / top) if src.is_dir() else shutil.copy2(src, tree / top))
    build = ["make", "-C", str(tree), "BUILD=build", "CFLAGS=-O0", "-j2", "libs"]
    first = subprocess.run(build, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr[-2000:]
    everything = compiled(first.stdout)
    assert len(everything) > 60 and not subprocess.run(build, capture_output=True, text=True).stdout.count(" -c ")
    header = "host/admit/names.h"
    users = sorted(str(d.relative_to(tree / "build" / "obj").with_suffix(".c"))
                   for d in (tree / "build" / "obj").rglob("*.d")
                   if re.search(rf"(^|\s){re.escape(header)}(\s|:|$)", d.read_text(), re.M))
    later = time.time() + 5
    os.utime(tree / header, (later, later))
    again = subprocess.run(build, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    rebuilt = compiled(again.stdout)
    assert rebuilt == users, (rebuilt, users)
    assert 0 < len(rebuilt) < len(everything) / 2, (len(rebuilt), len(everything))
    # Its direct includers are among them, and a file that does not include it is not.
    direct = [str(p.relative_to(tree)) for p in tree.rglob("*.c") if '"admit/names.h"' in p.read_text()
              or ('"names.h"' in p.read_text() and p.parent.name == "admit")]
    assert set(direct) <= set(rebuilt), (direct, rebuilt)
    assert "common/clock.c" not in rebuilt
