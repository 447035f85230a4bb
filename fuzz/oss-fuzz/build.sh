#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build: the same harnesses as fuzz/Makefile.
# Inside the OSS-Fuzz image $CC, $CFLAGS, $LIB_FUZZING_ENGINE, $SRC and
# $OUT are set; outside it (this machine) the defaults below apply:
#   CC=clang fuzz/oss-fuzz/build.sh
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CC=${CC:-clang}
CFLAGS=${CFLAGS:--O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined}
LIB_FUZZING_ENGINE=${LIB_FUZZING_ENGINE:--fsanitize=fuzzer}
OUT=${OUT:-$ROOT/build/oss-fuzz}
mkdir -p "$OUT"
SRCS=("$ROOT"/common/*.c)
for f in config requests names manifest describe schema_check schema_validate call_result attest_report bundle; do SRCS+=("$ROOT/host/$f.c"); done
SRCS+=("$ROOT/launcher/bwrap_argv.c")
INC=(-I"$ROOT/common" -I"$ROOT/host" -I"$ROOT/launcher" -D_GNU_SOURCE)
# Compile the shared code once, then link each harness against it.
OBJ=$(mktemp -d)
trap 'rm -rf "$OBJ"' EXIT
for src in "${SRCS[@]}"; do
  $CC $CFLAGS -std=c11 "${INC[@]}" -fsanitize=fuzzer-no-link -c "$src" -o "$OBJ/$(basename "$(dirname "$src")")_$(basename "$src" .c).o"
done
for harness in "$ROOT"/fuzz/harness/fuzz_*.c; do
  name=$(basename "$harness" .c)
  short=${name#fuzz_}
  $CC $CFLAGS -std=c11 "${INC[@]}" $LIB_FUZZING_ENGINE "$harness" "$OBJ"/*.o \
    -ljansson -lcrypto -lseccomp -larchive -lm -o "$OUT/$name"
  cp "$ROOT/fuzz/dict/$short.dict" "$OUT/$name.dict"
  (cd "$ROOT/fuzz/seeds/$short" && python3 -m zipfile -c "$OUT/${name}_seed_corpus.zip" .)
done
echo "built $(ls "$ROOT"/fuzz/harness/fuzz_*.c | wc -l) harnesses into $OUT"
