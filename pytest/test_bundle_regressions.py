"""libarchive's own test archives against the bundle reader (issue 24.9):
the 322 archives of libarchive 3.6.2's test suite (Debian's source package,
fetched and checked against its signed .dsc by fuzz/oss-fuzz/build_deps.sh),
each as it is and wrapped in gzip, through `capsule-host inspect`. Each must
end in time with a documented code and its JSON document on stdout, one
stderr line, and nothing written anywhere."""
import binascii
import gzip
import json
import os
import re
import subprocess
import tarfile

import pytest

from capsule_lab import BIN, REPO

DEPS_SRC = REPO / "build" / "oss-fuzz-deps-src"
# What reading a bundle may end in (docs/ERRORS.md).
BUNDLE_CODES = {"BUNDLE_FORMAT", "BUNDLE_ENTRY_UNSAFE", "BUNDLE_ENTRY_TYPE", "BUNDLE_DUPLICATE_ENTRY",
                "BUNDLE_EXTRA_ENTRY", "BUNDLE_MISSING_ENTRY", "MANIFEST_TOO_LARGE", "ARTIFACT_TOO_LARGE",
                "MANIFEST_INVALID", "JSON_LIMIT", "INTEGRITY_MISMATCH", "ENTRY_OPEN"}


def uudecode(text):
    """The bytes of one .uu file (begin/end framing, as libarchive ships them)."""
    out = bytearray()
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("begin "))  # after any comment
    for line in lines[start + 1:]:
        if line.strip() == "end":
            break
        if line.strip() in ("", "`"):
            continue
        try:
            out += binascii.a2b_uu(line)
        except binascii.Error:  # padding past the line's length (as Python's old uu module did)
            out += binascii.a2b_uu(line[:(((ord(line[0]) - 32) & 63) * 4 + 5) // 3])
    return bytes(out)


@pytest.fixture(scope="module")
def archives():
    DEPS_SRC.mkdir(parents=True, exist_ok=True)
    subprocess.run(["bash", str(REPO / "fuzz" / "oss-fuzz" / "build_deps.sh"), "--fetch"], check=True,
                   capture_output=True, env={**os.environ, "DEPS_SRC": str(DEPS_SRC)}, timeout=600)
    found = {}
    orig = re.search(r"^LIBARCHIVE_ORIG='([^']+)'", (DEPS_SRC / "sources.env").read_text(), re.M).group(1)
    with tarfile.open(DEPS_SRC / orig) as t:
        for m in t.getmembers():
            if m.isfile() and "/libarchive/test/" in m.name and m.name.endswith(".uu"):
                found[m.name.rsplit("/", 1)[1][:-3]] = uudecode(t.extractfile(m).read().decode("latin-1"))
    assert len(found) >= 322, len(found)  # 322 in 3.6.2; a newer upstream only adds
    return found


def test_libarchive_test_archives_as_bundles(archives, tmp_path):
    stage = tmp_path / "stage"
    stage.mkdir()
    bundle = tmp_path / "b.capsule.tar.gz"
    counts = {}
    for name, data in sorted(archives.items()):
        for wrapped, payload in (("raw", data), ("gzip", gzip.compress(data, mtime=0))):
            bundle.write_bytes(payload)
            p = subprocess.run([str(BIN / "capsule-host"), "inspect", str(bundle)], capture_output=True,
                               timeout=60, env={"PATH": os.environ["PATH"], "TMPDIR": str(stage)})
            assert p.returncode in (0, 1), (name, wrapped, p.returncode, p.stderr[-2000:])
            doc = json.loads(p.stdout)
            code = "ok" if doc["ok"] else doc["error"]["code"]
            assert code == "ok" or code in BUNDLE_CODES, (name, wrapped, doc)
            assert p.stderr.count(b"\n") <= 1, (name, wrapped, p.stderr)
            counts[code] = counts.get(code, 0) + 1
    assert os.listdir(stage) == [] and sorted(os.listdir(tmp_path)) == ["b.capsule.tar.gz", "stage"]
    print("libarchive's test archives, raw and gzip-wrapped:", dict(sorted(counts.items())))
