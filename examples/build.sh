#!/usr/bin/env bash
# Rebuilds every example guest as one standalone ESM file with the pinned
# esbuild, then rewrites the digest in its capsule.json.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x node_modules/.bin/esbuild ] || npm ci --no-audit --no-fund
for dir in examples/*-capsule; do
  node_modules/.bin/esbuild "$dir/source.mjs" --bundle --platform=node --format=esm \
    --target=node20 --alias:dsh-capsule/guest=./guest/index.mjs \
    --outfile="$dir/guest.mjs" --log-level=warning
  digest=$(sha256sum "$dir/guest.mjs" | cut -d' ' -f1)
  node -e '
    const fs = require("fs"); const [file, digest] = process.argv.slice(1);
    const m = JSON.parse(fs.readFileSync(file, "utf8")); m.integrity.sha256 = digest;
    fs.writeFileSync(file, JSON.stringify(m, null, 2) + "\n");' "$dir/capsule.json" "$digest"
  echo "$dir/guest.mjs $digest"
done
