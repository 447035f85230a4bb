"""Every fuzz seed and every regression input (fuzz/regressions/<harness>/)
through the ASan/UBSan replay build of its harness: a crash found once
stays fixed."""
import subprocess

import pytest

from capsule_lab import REPO

FUZZ = REPO / "fuzz"
HARNESSES = sorted(p.stem.removeprefix("fuzz_") for p in (FUZZ / "harness").glob("fuzz_*.c"))


# Both modules make the replay build in fuzz/, and the launcher harness's
# replay must see only its own /tmp/fuzz-launcher-* dirs: one worker.
pytestmark = pytest.mark.xdist_group("fuzz-replay")


@pytest.fixture(scope="module")
def replay_build():
    subprocess.run(["make", "-s", "-C", str(FUZZ), "replay"], check=True, capture_output=True)
    return REPO / "build" / "fuzz" / "replay"


@pytest.mark.parametrize("harness", HARNESSES)
def test_seeds_and_regressions_replay_clean(harness, replay_build):
    inputs = sorted((FUZZ / "seeds" / harness).glob("*")) + sorted((FUZZ / "regressions" / harness).glob("*"))
    assert inputs, f"harness {harness} has no seeds"
    p = subprocess.run([str(replay_build / f"fuzz_{harness}"), *map(str, inputs)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert f"replayed {len(inputs)} inputs" in p.stdout
