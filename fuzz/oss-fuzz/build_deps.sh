#!/bin/bash -eu
# Static builds of the two libraries the harnesses parse with, compiled with
# the engine's $CC and $CFLAGS so that their code is instrumented (fuzzed and
# covered) like ours: jansson (every JSON boundary) and libarchive (bundles:
# the tar format only, as host/admit/bundle.c reads it, and gzip for pack). Both
# come from Debian 12's current source packages (orig tarball plus Debian's
# patches, so the fuzzed code is the deployed code): debian_source.py finds
# the newest version across bookworm, its updates and its security suite
# and verifies every file along Debian's chain of trust (InRelease signature
# with gpgv, Sources index, file SHA-256), so the build follows the next
# security update instead of breaking on it. libcrypto (SHA-256), libseccomp
# (the cell filter) and zlib are linked statically from the image's -dev
# packages: the harnesses parse nothing with them.
#   build_deps.sh PREFIX     (libraries in PREFIX/lib, headers in PREFIX/include)
#   build_deps.sh --fetch    (only download and check the sources: the Dockerfile)
# Sources: $DEPS_SRC if set (the Dockerfile downloads them into $SRC/deps),
# else $SRC/deps, else downloaded into $WORK/deps-src. What was resolved is
# kept there (sources.env) and checked again on every run, so a build from
# fetched sources needs no network.
PREFIX=$1
FETCH_ONLY=false
[ "$PREFIX" = --fetch ] && FETCH_ONLY=true
WORK=${WORK:-$(mktemp -d)}
SRC_DIR=${DEPS_SRC:-}
if [ -z "$SRC_DIR" ]; then
  if [ -n "${SRC:-}" ] && [ -d "$SRC/deps" ]; then SRC_DIR=$SRC/deps; else SRC_DIR=$WORK/deps-src; fi
fi
mkdir -p "$SRC_DIR" "$WORK/deps-build"
HERE=$(cd "$(dirname "$0")" && pwd)
if $FETCH_ONLY || [ ! -f "$SRC_DIR/sources.env" ]; then
  python3 "$HERE/debian_source.py" "$SRC_DIR" jansson libarchive >"$SRC_DIR/sources.env.new"
  mv "$SRC_DIR/sources.env.new" "$SRC_DIR/sources.env"
fi
# shellcheck source=/dev/null
. "$SRC_DIR/sources.env"
for pair in $JANSSON_SHA256S $LIBARCHIVE_SHA256S; do
  echo "${pair#*=}  $SRC_DIR/${pair%%=*}" | sha256sum -c --quiet -
done
$FETCH_ONLY && exit 0
mkdir -p "$PREFIX/lib" "$PREFIX/include"

# Unpacks orig + debian tarballs and applies debian/patches/series in order.
unpack() {
  local dir=$WORK/deps-build/$1 orig=$2 debian=$3
  rm -rf "$dir"
  mkdir -p "$dir"
  tar -xf "$SRC_DIR/$orig" -C "$dir" --strip-components=1
  tar -xf "$SRC_DIR/$debian" -C "$dir"
  if [ -f "$dir/debian/patches/series" ]; then
    while read -r patch _; do
      case "$patch" in ''|'#'*) continue ;; esac
      patch -d "$dir" -p1 -s <"$dir/debian/patches/$patch"
    done <"$dir/debian/patches/series"
  fi
}

# One static library with CMake, the engine's compiler and flags; builds
# only TARGET (the static library), then installs it by hand.
cmake_static() {
  local dir=$WORK/deps-build/$1 target=$2
  shift 2
  cmake -S "$dir" -B "$dir/out" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE= \
    -DCMAKE_C_COMPILER="$CC" -DCMAKE_C_FLAGS="$CFLAGS" -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON "$@" >"$dir/cmake.log" 2>&1 ||
    { tail -40 "$dir/cmake.log"; exit 1; }
  cmake --build "$dir/out" --target "$target" >"$dir/build.log" 2>&1 ||
    { tail -40 "$dir/build.log"; exit 1; }
}

unpack jansson "$JANSSON_ORIG" "$JANSSON_DEBIAN"
cmake_static jansson jansson -DJANSSON_BUILD_DOCS=OFF -DJANSSON_WITHOUT_TESTS=ON \
  -DJANSSON_EXAMPLES=OFF -DJANSSON_BUILD_SHARED_LIBS=OFF
cp "$WORK/deps-build/jansson/out/lib/libjansson.a" "$PREFIX/lib/"
cp "$WORK/deps-build/jansson/out/include/"*.h "$PREFIX/include/"

unpack libarchive "$LIBARCHIVE_ORIG" "$LIBARCHIVE_DEBIAN"
cmake_static libarchive archive_static -DENABLE_TAR=OFF -DENABLE_CPIO=OFF -DENABLE_CAT=OFF -DENABLE_TEST=OFF \
  -DENABLE_ZLIB=ON -DENABLE_BZip2=OFF -DENABLE_LZMA=OFF -DENABLE_ZSTD=OFF -DENABLE_LZ4=OFF \
  -DENABLE_LZO=OFF -DENABLE_LIBB2=OFF -DENABLE_LIBXML2=OFF -DENABLE_EXPAT=OFF -DENABLE_OPENSSL=OFF \
  -DENABLE_NETTLE=OFF -DENABLE_MBEDTLS=OFF -DENABLE_CNG=OFF -DENABLE_ICONV=OFF -DENABLE_ACL=OFF \
  -DENABLE_XATTR=OFF -DENABLE_PCREPOSIX=OFF -DENABLE_LibGCC=OFF -DENABLE_WERROR=OFF
cp "$WORK/deps-build/libarchive/out/libarchive/libarchive.a" "$PREFIX/lib/"
cp "$WORK/deps-build/libarchive/libarchive/archive.h" \
  "$WORK/deps-build/libarchive/libarchive/archive_entry.h" "$PREFIX/include/"
echo "static jansson $JANSSON_VERSION and libarchive $LIBARCHIVE_VERSION (tar, gzip) in $PREFIX"
