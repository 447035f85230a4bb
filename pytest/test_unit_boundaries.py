"""C unit tests run as pytest cases, so that `make prove-fixes` can name
one as the case of a defence that lives in pure code (the verdict's one
reading). `make test` runs every unit test first (`make unit`); here a
unit test is built into the tree's own build directory, with that build's
sanitizers, and run."""
import subprocess

import pytest

from capsule_lab import BIN, REPO, one_worker_at_a_time

# Unit tests that prove a defence (files in attack-corpus/fixes/ name them).
GUARDS = ["verdict", "policy", "workspace", "scheduler", "subproc", "safe_text", "file_uri", "statement"]


@pytest.mark.parametrize("name", GUARDS)
def test_unit(name):
    build = BIN.parent
    sanitize = "1" if build.name == "asan" else "0"
    target = build / "unit" / f"test_{name}"
    with one_worker_at_a_time("unit-build"):  # one make at a time in the shared build
        made = subprocess.run(["make", "-s", "-C", str(REPO), f"BUILD={build}", f"SANITIZE={sanitize}",
                               str(target)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr[-2000:]
    ran = subprocess.run([str(target)], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-2000:]
