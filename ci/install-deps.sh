#!/usr/bin/env bash
# Installs build and test dependencies on Debian 12 / Ubuntu 24.04 (as root,
# or with sudo). Node.js must be 20.11 or newer: Debian 12 and Ubuntu 24.04
# ship 18.x as "nodejs", so an older node is reported, never silently used.
set -euo pipefail
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
packages=(bubblewrap build-essential pkg-config xxd libjansson-dev libssl-dev libarchive-dev
          libseccomp-dev python3 python3-pytest python3-yaml clang afl++ shellcheck libcmocka-dev
          cmake ninja-build curl zlib1g-dev gpgv debian-archive-keyring python3-cryptography
          openssh-client)
command -v node >/dev/null 2>&1 || packages+=(nodejs)
# npm ships with NodeSource's nodejs; Debian's npm package conflicts with it.
command -v npm >/dev/null 2>&1 || packages+=(npm)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
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
version=$(node --version)
major=${version#v}; major=${major%%.*}
minor=${version#v*.}; minor=${minor%%.*}
if [ "$major" -lt 20 ] || { [ "$major" -eq 20 ] && [ "$minor" -lt 11 ]; }; then
  echo "install-deps: node $version is too old; dsh-capsule needs Node.js 20.11+ (permission model)." >&2
  exit 1
fi
echo "install-deps: ok (bwrap $(bwrap --version | cut -d' ' -f2), node $version)"
