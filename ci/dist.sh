#!/usr/bin/env bash
# make dist: the source release of the commit checked out, as
#   OUT/dsh-capsule-VERSION.tar.gz        (reproducible: same commit and
#                                           SOURCE_DATE_EPOCH, same bytes)
#   OUT/dsh-capsule-VERSION.tar.gz.sha256 (sha256sum -c reads it)
#   OUT/dsh-capsule-VERSION.tar.gz.intoto.json, and with a key .dsse.json
#   and .sigstore.json: the release statement (capsule-host sign-release),
#   which `capsule-host verify ... --subject TARBALL --key PUB` checks.
# Usage: ci/dist.sh HOST OUT [KEY]    (SOURCE_DATE_EPOCH: default the
# commit's own date). The tarball holds the commit's files, never the work
# tree's uncommitted changes: a warning says when there are some.
set -euo pipefail
host=$1 out=$2 key=${3:-}
cd "$(dirname "$0")/.."
version=$("$host" version)
name="dsh-capsule-$version"
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct HEAD)}"
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "dist: the work tree has uncommitted changes; the tarball holds HEAD ($(git rev-parse --short HEAD)) only" >&2
fi
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/$name"
git archive --format=tar HEAD | tar -x -C "$stage/$name"
# Everything that could differ between two runs is fixed: order, times,
# owners, modes (git's 644/755 only), and gzip's name and time fields.
(cd "$stage" && find "$name" -print0 | LC_ALL=C sort -z |
  tar --null --no-recursion -T - --format=pax --mtime="@$SOURCE_DATE_EPOCH" \
      --owner=0 --group=0 --numeric-owner --mode='u+rwX,go=rX' \
      --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime -cf - ) |
  gzip -n -9 > "$stage/$name.tar.gz"
mkdir -p "$out"
mv "$stage/$name.tar.gz" "$out/$name.tar.gz"
(cd "$out" && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256")
"$host" sign-release "$out/$name.tar.gz" --statement "$out" ${key:+--key "$key"} > /dev/null
echo "dist: $out/$name.tar.gz ($(stat -c %s "$out/$name.tar.gz") bytes, sha256 $(cut -d' ' -f1 "$out/$name.tar.gz.sha256"))"
echo "dist: release statement $out/$name.tar.gz.intoto.json${key:+, signed (.dsse.json, .sigstore.json)}"
