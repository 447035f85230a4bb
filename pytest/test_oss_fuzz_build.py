"""fuzz/oss-fuzz/build.sh as OSS-Fuzz and ClusterFuzzLite run it: copied to
$SRC/build.sh, the repository in $SRC/dsh-capsule, $OUT and $WORK elsewhere,
the engine's compilers and flags in the environment; for libFuzzer and for
AFL++ (its libAFLDriver). Every harness must come out with its dictionary,
.options and seed corpus, need no shared library the runner image lacks
(jansson and libarchive built from source with the engine's flags, the rest
linked statically), and run its seeds."""
import os
import re
import shutil
import signal
import subprocess
import zipfile

import pytest

from capsule_lab import REPO, copy_working_tree, one_worker_at_a_time

CFLAGS = "-O1 -fno-omit-frame-pointer -gline-tables-only -fsanitize=address -fsanitize-address-use-after-scope"
# What the OSS-Fuzz runner image has: the C and C++ runtimes, nothing more.
# What every runner image has: glibc's own libraries (libc6 ships
# libresolv too, which Debian 13's static libcrypto pulls in), libstdc++ and
# libgcc.
RUNNER_LIBS = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "libresolv.so.2",
               "libstdc++.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2"}
ENGINES = {
    "libfuzzer": {"CC": "clang", "CXX": "clang++", "CFLAGS": CFLAGS + " -fsanitize=fuzzer-no-link",
                  "LIB_FUZZING_ENGINE": "-fsanitize=fuzzer"},
    "afl": {"CC": "afl-clang-fast", "CXX": "afl-clang-fast++", "CFLAGS": CFLAGS,
            "LIB_FUZZING_ENGINE": "/usr/lib/afl/libAFLDriver.a", "AFL_QUIET": "1"},
}


class Build:
    """One engine's build.sh, started in its own simulated image layout."""

    def __init__(self, root, engine):
        self.src, self.out, self.work = root / "src", root / "out", root / "work"
        for d in (self.src, self.out, self.work):
            d.mkdir()
        copy_working_tree(self.src / "dsh-capsule")
        shutil.copy2(REPO / "fuzz" / "oss-fuzz" / "build.sh", self.src / "build.sh")
        flags = ENGINES[engine]
        # Debian's jansson and libarchive sources, downloaded once (before
        # the builds start) and checked by build_deps.sh against their .dsc
        # digests on every run.
        env = {"PATH": os.environ["PATH"], "SRC": str(self.src), "OUT": str(self.out),
               "WORK": str(self.work), "CXXFLAGS": flags["CFLAGS"], "DEPS_SRC": str(DEPS_SRC), **flags}
        self.log = root / "build.log"
        with open(self.log, "w") as log:
            self.p = subprocess.Popen(["bash", "-eu", str(self.src / "build.sh")], cwd=self.src / "dsh-capsule",
                                      env=env, stdout=log, stderr=subprocess.STDOUT, text=True,
                                      start_new_session=True)

    def end(self):
        """Kills what is left of this build: its own process group."""
        if self.p.poll() is None:
            os.killpg(self.p.pid, signal.SIGKILL)
            self.p.wait()

    def wait(self):
        try:
            rc = self.p.wait(timeout=1800)
        finally:
            self.end()
        return rc, self.log.read_text()


DEPS_SRC = REPO / "build" / "oss-fuzz-deps-src"

# Both builds come from one module fixture: its tests stay on one worker.
pytestmark = pytest.mark.xdist_group("oss-fuzz")


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    """Both engines' builds at once: each spends most of its time in CMake's
    configure checks of jansson and libarchive, one compiler at a time, so
    side by side they take about the time of one (issue 33: 9.5 min one
    after the other in make test)."""
    DEPS_SRC.mkdir(parents=True, exist_ok=True)
    with one_worker_at_a_time("oss-fuzz-deps-src"):  # not two first downloads at once
        if not (DEPS_SRC / "sources.env").exists():
            subprocess.run(["bash", "-eu", str(REPO / "fuzz" / "oss-fuzz" / "build_deps.sh"), "--fetch"],
                           env={**os.environ, "DEPS_SRC": str(DEPS_SRC)}, check=True, capture_output=True)
    started = {e: Build(tmp_path_factory.mktemp(f"oss-fuzz-{e}"), e) for e in sorted(ENGINES)}
    yield started
    for b in started.values():
        b.end()


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_oss_fuzz_build_in_a_simulated_image_layout(builds, engine):
    b = builds[engine]
    rc, log = b.wait()
    assert rc == 0, log[-6000:]
    out, work = b.out, b.work
    harnesses = sorted(f.stem for f in (REPO / "fuzz" / "harness").glob("fuzz_*.c"))
    assert f"built {len(harnesses)} harnesses" in log
    for name in harnesses:
        for suffix in ("", ".dict", ".options", "_seed_corpus.zip"):
            assert (out / f"{name}{suffix}").is_file(), f"{name}{suffix} missing"
        dynamic = subprocess.run(["readelf", "-d", str(out / name)], capture_output=True, text=True).stdout
        needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic))
        assert needed <= RUNNER_LIBS, f"{name} needs {needed - RUNNER_LIBS}"
        seeds = work / f"seeds-{name}"
        with zipfile.ZipFile(out / f"{name}_seed_corpus.zip") as z:
            z.extractall(seeds)
        inputs = sorted(seeds.iterdir())[:4]
        assert inputs, name
        run = subprocess.run([str(out / name), *map(str, inputs)], capture_output=True, text=True,
                             timeout=120, env={"PATH": os.environ["PATH"]})
        assert run.returncode == 0, f"{name}: {run.stderr[-2000:]}"
