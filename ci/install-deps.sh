#!/usr/bin/env bash
# Installs build and test dependencies on Debian 12 / Ubuntu 24.04 (as root,
# or with sudo). Node.js must be 20.11 or newer: Debian 12 and Ubuntu 24.04
# ship 18.x as "nodejs", so a machine without a usable node gets the pinned
# Node 26 LTS from ci/install-node.sh (which says where, and removes nothing
# it did not create); an older node first on PATH is reported, never used.
#
#   ci/install-deps.sh           build, test and fuzz dependencies (make deps)
#   ci/install-deps.sh --build   only what building and running the host
#                                needs: the compiler, the five libraries'
#                                headers, bubblewrap (make deps-build; the
#                                gate action installs this, Node comes from
#                                the action's setup-node)
set -euo pipefail
build_only=false
case "${1:-}" in
  "") ;;
  --build) build_only=true ;;
  *) echo "install-deps: unknown argument $1; usage: ci/install-deps.sh [--build]" >&2; exit 2 ;;
esac
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
build_packages=(bubblewrap build-essential pkg-config xxd libjansson-dev libssl-dev libarchive-dev
                libseccomp-dev zlib1g-dev)
# The test driver, fuzzers, linters, the Debian packaging tools and the
# outside consumers the tests check our output with.
test_packages=(python3 python3-pytest python3-pytest-xdist python3-yaml clang afl++ shellcheck libcmocka-dev
               cmake ninja-build curl gpgv debian-archive-keyring python3-cryptography
               openssh-client openssl cmark-gfm llvm debhelper dpkg-dev lintian clang-format)
packages=("${build_packages[@]}")
$build_only || packages+=("${test_packages[@]}")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  # Progress shown: on a fresh machine this is minutes of downloads.
  echo "install-deps: apt-get installs ${#missing[@]} packages: ${missing[*]}"
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi
if $build_only; then
  echo "install-deps: ok (build only: bwrap $(bwrap --version | cut -d' ' -f2), $(cc --version | head -1))"
  exit 0
fi
# clang's sanitizer and libFuzzer runtime is only a Recommends of clang (and
# so never installed above): named by clang's major version (Debian 12:
# libclang-rt-14-dev, Ubuntu 24.04: libclang-rt-18-dev, Debian 13: -19-).
clang_major=$(clang --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
rt="libclang-rt-${clang_major}-dev"
if ! dpkg-query -W -f='${Status}' "$rt" 2>/dev/null | grep -q "install ok installed"; then
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "$rt"
fi
node_usable() { # node on PATH, 20.11 or newer
  local v major minor
  v=$(node --version 2>/dev/null) || return 1
  major=${v#v}; major=${major%%.*}
  minor=${v#v*.}; minor=${minor%%.*}
  [ "$major" -gt 20 ] || { [ "$major" -eq 20 ] && [ "$minor" -ge 11 ]; }
}

if ! node_usable; then
  if command -v node >/dev/null 2>&1; then
    echo "install-deps: $(command -v node) ($(node --version 2>/dev/null || echo 'does not run')) is not" \
         "Node.js 20.11 or newer: not used" >&2
  fi
  "$(dirname "$0")/install-node.sh"
  hash -r
  if ! node_usable; then
    echo "install-deps: $(command -v node) (node $(node --version 2>/dev/null)) still comes first on PATH;" \
         "put ${CAPSULE_NODE_BINDIR:-/usr/local/bin} before it, or remove it" >&2
    exit 1
  fi
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "install-deps: node $(node --version) has no npm beside it; install npm for it (the tests install their pinned peers with npm)" >&2
  exit 1
fi
node_major=$(node --version | sed 's/^v\([0-9]*\).*/\1/')
if [ "$node_major" -le 20 ]; then
  echo "install-deps: warning: node $(node --version) is Node 20, past its end of life (2026-04-30):" \
       "it still runs cells, but use 24 or 26 (capsule-host doctor says the same)" >&2
fi
echo "install-deps: ok (bwrap $(bwrap --version | cut -d' ' -f2), node $(node --version) at $(command -v node), npm $(npm --version))"
