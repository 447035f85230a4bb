#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build: the same harnesses as fuzz/Makefile.
# In their images $CC, $CXX, $CFLAGS, $CXXFLAGS, $LIB_FUZZING_ENGINE, $SRC,
# $OUT and $WORK are set and this file runs as $SRC/build.sh with the
# repository in $SRC/dsh-capsule. The engine decides the flags: $CFLAGS
# already carries the engine's compile flags (-fsanitize=fuzzer-no-link for
# libFuzzer, none for AFL++, whose compiler instruments), and
# $LIB_FUZZING_ENGINE is linked with $CXX. Outside their images (this
# machine, pytest/test_oss_fuzz_build.py) the defaults below apply:
#   fuzz/oss-fuzz/build.sh
# The flag variables are word lists by OSS-Fuzz's convention: split on purpose.
# shellcheck disable=SC2086
HERE=$(cd "$(dirname "$0")" && pwd)
if [ -n "${SRC:-}" ] && [ -d "$SRC/dsh-capsule/fuzz/harness" ]; then
  ROOT=$SRC/dsh-capsule
else
  ROOT=$(cd "$HERE/../.." && pwd)
fi
CC=${CC:-clang}
CXX=${CXX:-clang++}
CFLAGS=${CFLAGS:--O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link}
CXXFLAGS=${CXXFLAGS:-$CFLAGS}
LIB_FUZZING_ENGINE=${LIB_FUZZING_ENGINE:--fsanitize=fuzzer}
OUT=${OUT:-$ROOT/build/oss-fuzz}
WORK=${WORK:-$(mktemp -d)}
mkdir -p "$OUT"

# jansson and libarchive, static and instrumented (build_deps.sh); the
# harnesses then need nothing the runner image lacks.
DEPS=$WORK/deps
bash -eu "$ROOT/fuzz/oss-fuzz/build_deps.sh" "$DEPS"

# Every harness links the project's own libraries, built by the top-level
# Makefile's one rule (`make libs`) with the engine's compiler and flags.
LIBDIR=$WORK/capsule
# Every core: the image gives this build the machine (OSS-Fuzz and
# ClusterFuzzLite builders have several; the simulated build in make test two).
JOBS=$(nproc)
make -s -j"$JOBS" -C "$ROOT" libs BUILD="$LIBDIR" CC="$CC" CFLAGS="$CFLAGS" WARN= HARDEN= \
  CFLAGS_PKG="-I$DEPS/include" LIBS_PKG=
CAPSULE_LIBS="$LIBDIR/libcapsule-host.a $LIBDIR/libcapsule-launcher.a $LIBDIR/libcapsule-common.a"
INC=(-I"$DEPS/include" -I"$ROOT/common" -I"$ROOT/host" -I"$ROOT/launcher" -D_GNU_SOURCE)
# libcrypto, libseccomp and zlib from the image's -dev packages, statically,
# with what each needs in turn as pkg-config says (OpenSSL 3.5 in Debian 13
# also needs libzstd); libc's own -ldl and -pthread stay dynamic.
STATIC=""
for lib in $(pkg-config --static --libs-only-l libcrypto libseccomp zlib); do
  case "$lib" in -ldl | -lpthread | -lrt | -lm) ;; *) STATIC="$STATIC $lib" ;; esac
done
LIBS="$DEPS/lib/libarchive.a $DEPS/lib/libjansson.a -Wl,-Bstatic$STATIC -Wl,-Bdynamic -ldl -pthread -lm"

# One harness: its object, its binary, dictionary, options and seed corpus.
# Run in the background, where -e does not reach: every step is checked.
build_harness() {
  local harness=$1 name short max_len corpus
  name=$(basename "$harness" .c)
  short=${name#fuzz_}
  $CC $CFLAGS -std=gnu11 "${INC[@]}" -c "$harness" -o "$WORK/$name.o" || return 1
  $CXX $CXXFLAGS "$WORK/$name.o" $CAPSULE_LIBS $LIB_FUZZING_ENGINE $LIBS -o "$OUT/$name" || return 1
  cp "$ROOT/fuzz/dict/$short.dict" "$OUT/$name.dict" || return 1
  max_len=$(sed -n 's/^max_len = //p' "$ROOT/fuzz/options/$short.options" 2>/dev/null || true)
  printf '[libfuzzer]\ndict = %s.dict\nmax_len = %s\ntimeout = 10\n' "$name" "${max_len:-65536}" \
    > "$OUT/$name.options" || return 1
  # Seed corpus: the generated seeds and the kept, minimized corpus.
  corpus=("$ROOT/fuzz/seeds/$short"/*)
  [ -d "$ROOT/fuzz/corpus/$short" ] && corpus+=("$ROOT/fuzz/corpus/$short"/*)
  python3 -m zipfile -c "$OUT/${name}_seed_corpus.zip" "${corpus[@]}"
}

# JOBS harnesses at a time; each that fails leaves a mark, and any mark
# fails the build once all have ended.
FAILED=$WORK/failed-harnesses
rm -rf "$FAILED"
mkdir -p "$FAILED"
count=0
for harness in "$ROOT"/fuzz/harness/fuzz_*.c; do
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
  { build_harness "$harness" || touch "$FAILED/$(basename "$harness" .c)"; } &
  count=$((count + 1))
done
wait
if [ -n "$(ls -A "$FAILED")" ]; then
  echo "harnesses that did not build: $(find "$FAILED" -type f -printf '%f ')" >&2
  exit 1
fi
echo "built $count harnesses into $OUT"
