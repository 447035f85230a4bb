"""What the fuzz tests share (test_fuzz_reach.py, test_fuzz_regressions.py):
the harness names and the replay build, made once per module. Both
modules make the replay build in fuzz/, and the launcher harness's replay
must see only its own /tmp/fuzz-launcher-* dirs: every module that imports
this one puts itself in the FUZZ_REPLAY_GROUP xdist group, one worker
(test_layout.py holds that)."""
import subprocess

import pytest

from capsule_lab import REPO

FUZZ = REPO / "fuzz"
HARNESSES = sorted(p.stem.removeprefix("fuzz_") for p in (FUZZ / "harness").glob("fuzz_*.c"))
FUZZ_REPLAY_GROUP = "fuzz-replay"


@pytest.fixture(scope="module")
def replay_build():
    subprocess.run(["make", "-s", "-C", str(FUZZ), "replay"], check=True, capture_output=True)
    return REPO / "build" / "fuzz" / "replay"
