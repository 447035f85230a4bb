"""Coverage floors that hold (issue 50): every harness's seeds and kept
corpus (fuzz/seeds, fuzz/corpus), replayed through the clang coverage build,
must cover at least its floor of each target file's lines
(fuzz/coverage_floors.json; targets as fuzz/coverage.py names them). A
harness whose seeds or corpus were lost, or a change that leaves a file's
lines dark, fails here with the file, its figure and its floor."""
import importlib.util
import json
import shutil
import subprocess

import pytest

from capsule_lab import REPO, one_worker_at_a_time

pytestmark = pytest.mark.xdist_group("fuzz-cov")

FLOORS = REPO / "fuzz" / "coverage_floors.json"


def fuzz_coverage():
    # By path: "coverage" is also the name of a well-known Python package.
    spec = importlib.util.spec_from_file_location("fuzz_coverage", REPO / "fuzz" / "coverage.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def cov_build():
    assert shutil.which("clang") and shutil.which("llvm-cov"), "clang and llvm-cov come with make deps"
    with one_worker_at_a_time("fuzz-cov"):
        made = subprocess.run(["make", "-s", "-C", str(REPO / "fuzz"), "cov"], capture_output=True, text=True,
                              timeout=1800)
    assert made.returncode == 0, made.stderr[-3000:]
    return fuzz_coverage()


def replay_inputs(harness, into):
    into.mkdir(parents=True)
    for d in (REPO / "fuzz" / "seeds" / harness, REPO / "fuzz" / "corpus" / harness):
        for p in d.iterdir() if d.is_dir() else []:
            if p.is_file():
                shutil.copy(p, into / f"{d.parent.name}-{p.name}")
    return into


def test_every_harness_has_a_floor_for_each_target():
    floors = json.loads(FLOORS.read_text())
    targets = fuzz_coverage().TARGETS
    assert sorted(floors) == sorted(targets)
    for harness, files in targets.items():
        assert sorted(floors[harness]) == sorted(files), harness


def test_the_kept_corpus_holds_every_floor(cov_build, tmp_path):
    floors = json.loads(FLOORS.read_text())
    rows, below = [], []
    for harness, files in sorted(floors.items()):
        corpus = replay_inputs(harness, tmp_path / harness / "in")
        # No seed and no corpus left: nothing is covered.
        got = cov_build.line_coverage(harness, corpus, tmp_path / harness) if any(corpus.iterdir()) \
            else {target: (0, 1) for target in files}
        for target, floor in sorted(files.items()):
            covered, total = got[target]
            pct = 100 * covered / total if total else 0
            rows.append(f"{harness:18} {pct:6.1f}% (floor {floor:5.1f}%)  {target}")
            if pct < floor:
                below.append(f"{harness}: {target} {pct:.1f}% < floor {floor}%")
    print("\n".join(rows))
    assert below == [], below
