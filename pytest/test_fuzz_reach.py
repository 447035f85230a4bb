"""The fuzz seeds reach what they are for: every harness's seeds and kept
corpus, replayed through the replay build (which prints each input's
outcome, fuzz/harness/fuzz_reach.h), reach every success path and every
refusal that fuzz/reach.json names, caps included. A seed that rots into a
parse error (as the launch-document seeds did when the loader mount became
required) or a cap past the harness's max_len fails here, not silently in
a campaign."""
import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from fuzz_replay import FUZZ, FUZZ_REPLAY_GROUP, HARNESSES, replay_build  # noqa: F401 (a fixture)

REACH = json.loads((FUZZ / "reach.json").read_text())["harnesses"]

pytestmark = pytest.mark.xdist_group(FUZZ_REPLAY_GROUP)


def reached(replay_build, harness):
    inputs = sorted((FUZZ / "seeds" / harness).glob("*")) + sorted((FUZZ / "corpus" / harness).glob("*"))
    p = subprocess.run([str(replay_build / f"fuzz_{harness}"), *map(str, inputs)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return Counter(line.removeprefix("reached ") for line in p.stderr.splitlines() if line.startswith("reached "))


def test_every_harness_says_what_its_seeds_reach():
    assert sorted(REACH) == HARNESSES
    assert all(REACH[h]["reach"] for h in HARNESSES)


@pytest.mark.parametrize("harness", HARNESSES)
def test_seeds_reach_every_listed_outcome(harness, replay_build):
    spec = REACH[harness]
    assert not set(spec["reach"]) & set(spec.get("notReached", {})), "an outcome is both listed and excused"
    got = reached(replay_build, harness)
    missing = [o for o in spec["reach"] if o not in got]
    assert not missing, f"{harness}: seeds and corpus never reach {missing}; reached: {dict(got)}"


def test_launcher_harness_leaves_no_fixture_behind(replay_build):
    before = set(Path("/tmp").glob("fuzz-launcher-*"))
    got = reached(replay_build, "launcher")
    assert got["prepare OK"] >= 2  # with and without a startup snapshot
    assert set(Path("/tmp").glob("fuzz-launcher-*")) == before
