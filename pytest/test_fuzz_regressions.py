"""Every fuzz seed and every regression input (fuzz/regressions/<harness>/)
through the ASan/UBSan replay build of its harness: a crash found once
stays fixed."""
import subprocess

import pytest

from fuzz_replay import FUZZ, FUZZ_REPLAY_GROUP, HARNESSES, replay_build  # noqa: F401 (a fixture)

pytestmark = pytest.mark.xdist_group(FUZZ_REPLAY_GROUP)


@pytest.mark.parametrize("harness", HARNESSES)
def test_seeds_and_regressions_replay_clean(harness, replay_build):
    inputs = sorted((FUZZ / "seeds" / harness).glob("*")) + sorted((FUZZ / "regressions" / harness).glob("*"))
    assert inputs, f"harness {harness} has no seeds"
    p = subprocess.run([str(replay_build / f"fuzz_{harness}"), *map(str, inputs)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert f"replayed {len(inputs)} inputs" in p.stdout
