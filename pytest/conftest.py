import shutil

import pytest

pytest_plugins = ["matrix_plugin"]

from capsule_lab import BIN, Lab, cell_processes


def pytest_configure(config):
    config.addinivalue_line("markers", "xdist_group(name): tests that share a build or a download "
                            "run on one pytest worker (make test: pytest -n, --dist loadgroup)")


# Groups that take minutes start first: on two workers the rest of the suite
# runs beside them instead of one worker finishing them alone at the end.
LONG_GROUPS = ("oss-fuzz",)


def pytest_collection_modifyitems(items):
    def group(item):
        mark = item.get_closest_marker("xdist_group")
        return mark.args[0] if mark else None  # our marks name their group first
    items.sort(key=lambda item: group(item) not in LONG_GROUPS)


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
    for held in lab.keep:  # sockets, and serves a failed test left running
        held.end() if hasattr(held, "end") else held.close()
    assert cell_processes() == [], f"cell processes survived the test: {cell_processes()}"
