#!/usr/bin/env bash
# Fails when a shipped guest.mjs no longer matches the digest its manifest pins.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
for dir in examples/*-capsule; do
  want=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).integrity.sha256)' "$dir/capsule.json")
  got=$(sha256sum "$dir/guest.mjs" | cut -d' ' -f1)
  if [ "$want" = "$got" ]; then echo "ok   $dir $got"; else echo "FAIL $dir manifest $want, artifact $got"; status=1; fi
done
exit $status
