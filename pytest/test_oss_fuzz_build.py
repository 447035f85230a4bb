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
import subprocess
import zipfile

import pytest

from capsule_lab import REPO, copy_working_tree

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


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_oss_fuzz_build_in_a_simulated_image_layout(tmp_path, engine):
    src, out, work = tmp_path / "src", tmp_path / "out", tmp_path / "work"
    for d in (src, out, work):
        d.mkdir()
    copy_working_tree(src / "dsh-capsule")
    shutil.copy2(REPO / "fuzz" / "oss-fuzz" / "build.sh", src / "build.sh")
    flags = ENGINES[engine]
    # Debian's jansson and libarchive sources, downloaded once and checked by
    # build_deps.sh against their .dsc digests on every run.
    deps_src = REPO / "build" / "oss-fuzz-deps-src"
    deps_src.mkdir(parents=True, exist_ok=True)
    env = {"PATH": os.environ["PATH"], "SRC": str(src), "OUT": str(out), "WORK": str(work),
           "CXXFLAGS": flags["CFLAGS"], "DEPS_SRC": str(deps_src), **flags}
    p = subprocess.run(["bash", "-eu", str(src / "build.sh")], cwd=src / "dsh-capsule", env=env,
                       capture_output=True, text=True, timeout=1800)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    harnesses = sorted(f.stem for f in (REPO / "fuzz" / "harness").glob("fuzz_*.c"))
    assert f"built {len(harnesses)} harnesses" in p.stdout
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
