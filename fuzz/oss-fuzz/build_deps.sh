#!/bin/bash -eu
# Static builds of the two libraries the harnesses parse with, compiled with
# the engine's $CC and $CFLAGS so that their code is instrumented (fuzzed and
# covered) like ours: jansson (every JSON boundary) and libarchive (bundles:
# tar and gzip only, as host/bundle.c reads and writes them). Both come from
# Debian bookworm's source packages (orig tarball plus Debian's patches, so
# the fuzzed code is the deployed code), each file checked against the
# SHA-256 of its signed .dsc. libcrypto (SHA-256), libseccomp (the cell
# filter) and zlib are linked statically from the image's -dev packages:
# the harnesses parse nothing with them.
#   build_deps.sh PREFIX     (libraries in PREFIX/lib, headers in PREFIX/include)
#   build_deps.sh --fetch    (only download and check the sources: the Dockerfile)
# Sources: $DEPS_SRC if set (the Dockerfile downloads them into $SRC/deps),
# else $SRC/deps, else downloaded into $WORK/deps-src.
PREFIX=$1
FETCH_ONLY=false
[ "$PREFIX" = --fetch ] && FETCH_ONLY=true
WORK=${WORK:-$(mktemp -d)}
SRC_DIR=${DEPS_SRC:-}
if [ -z "$SRC_DIR" ]; then
  if [ -n "${SRC:-}" ] && [ -d "$SRC/deps" ]; then SRC_DIR=$SRC/deps; else SRC_DIR=$WORK/deps-src; fi
fi
mkdir -p "$SRC_DIR" "$WORK/deps-build"
POOL=http://deb.debian.org/debian/pool/main
SECURITY=http://deb.debian.org/debian-security/pool/updates/main

# name, URL, SHA-256 (from jansson_2.14-2.dsc and libarchive_3.6.2-1+deb12u5.dsc)
SOURCES=(
  "jansson_2.14.orig.tar.gz $POOL/j/jansson c739578bf6b764aa0752db9a2fdadcfe921c78f1228c7ec0bb47fa804c55d17b"
  "jansson_2.14-2.debian.tar.xz $POOL/j/jansson e89fe4fd8221f6934ddb50f2e7f8404311928d0e23e49a5599f3d3d14ee8cb88"
  "libarchive_3.6.2.orig.tar.xz $SECURITY/liba/libarchive 9e2c1b80d5fbe59b61308fdfab6c79b5021d7ff4ff2489fb12daf0a96a83551d"
  "libarchive_3.6.2-1+deb12u5.debian.tar.xz $SECURITY/liba/libarchive 5b32794076e9b0d8cd74fd2c453340b72c6362188f40fa1aac96304cb5683315"
)
for entry in "${SOURCES[@]}"; do
  read -r file url sha <<<"$entry"
  [ -f "$SRC_DIR/$file" ] || curl -fsSL --retry 3 -o "$SRC_DIR/$file" "$url/$file"
  echo "$sha  $SRC_DIR/$file" | sha256sum -c --quiet -
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

unpack jansson jansson_2.14.orig.tar.gz jansson_2.14-2.debian.tar.xz
cmake_static jansson jansson -DJANSSON_BUILD_DOCS=OFF -DJANSSON_WITHOUT_TESTS=ON \
  -DJANSSON_EXAMPLES=OFF -DJANSSON_BUILD_SHARED_LIBS=OFF
cp "$WORK/deps-build/jansson/out/lib/libjansson.a" "$PREFIX/lib/"
cp "$WORK/deps-build/jansson/out/include/"*.h "$PREFIX/include/"

unpack libarchive libarchive_3.6.2.orig.tar.xz libarchive_3.6.2-1+deb12u5.debian.tar.xz
cmake_static libarchive archive_static -DENABLE_TAR=OFF -DENABLE_CPIO=OFF -DENABLE_CAT=OFF -DENABLE_TEST=OFF \
  -DENABLE_ZLIB=ON -DENABLE_BZip2=OFF -DENABLE_LZMA=OFF -DENABLE_ZSTD=OFF -DENABLE_LZ4=OFF \
  -DENABLE_LZO=OFF -DENABLE_LIBB2=OFF -DENABLE_LIBXML2=OFF -DENABLE_EXPAT=OFF -DENABLE_OPENSSL=OFF \
  -DENABLE_NETTLE=OFF -DENABLE_MBEDTLS=OFF -DENABLE_CNG=OFF -DENABLE_ICONV=OFF -DENABLE_ACL=OFF \
  -DENABLE_XATTR=OFF -DENABLE_PCREPOSIX=OFF -DENABLE_LibGCC=OFF -DENABLE_WERROR=OFF
cp "$WORK/deps-build/libarchive/out/libarchive/libarchive.a" "$PREFIX/lib/"
cp "$WORK/deps-build/libarchive/libarchive/archive.h" \
  "$WORK/deps-build/libarchive/libarchive/archive_entry.h" "$PREFIX/include/"
echo "static jansson and libarchive (tar, gzip) in $PREFIX"
