import shutil
import subprocess

import pytest

pytest_plugins = ["matrix_plugin"]

from capsule_lab import BIN, Lab, cell_processes


def pytest_sessionstart(session):
    for name in ("capsule-host", "capsule-launcher", "capsule-probe"):
        if not (BIN / name).exists():
            raise pytest.UsageError(f"{BIN / name} is missing: run `make` (or `make test`)")
    if not shutil.which("bwrap"):
        raise pytest.UsageError("bwrap is not installed: run `make deps`")


@pytest.fixture
def lab(tmp_path):
    tmp_path.chmod(0o755)
    lab = Lab(tmp_path)
    yield lab
    for s in lab.keep:
        s.close()
    assert cell_processes() == [], f"cell processes survived the test: {cell_processes()}"
