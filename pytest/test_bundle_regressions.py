"""libarchive's own test archives against the bundle reader (issue 24.9):
the 322 archives of libarchive 3.6.2's test suite (Debian's source package,
fetched and verified by fuzz/oss-fuzz/build_deps.sh, read by fuzz/extra_seeds.py),
each as it is and wrapped in gzip, through `capsule-host inspect`. Each must
end in time with a documented code and its JSON document on stdout, one
stderr line, and nothing written anywhere."""
import gzip
import json
import os
import subprocess
import sys

import pytest

from capsule_lab import BIN, REPO, one_worker_at_a_time

sys.path.insert(0, str(REPO / "fuzz"))
import extra_seeds  # noqa: E402  (the one reader of libarchive's test archives)

# What reading a bundle may end in (docs/ERRORS.md).
BUNDLE_CODES = {"BUNDLE_FORMAT", "BUNDLE_ENTRY_UNSAFE", "BUNDLE_ENTRY_TYPE", "BUNDLE_DUPLICATE_ENTRY",
                "BUNDLE_EXTRA_ENTRY", "BUNDLE_MISSING_ENTRY", "MANIFEST_TOO_LARGE", "ARTIFACT_TOO_LARGE",
                "MANIFEST_INVALID", "JSON_LIMIT", "INTEGRITY_MISMATCH", "ENTRY_OPEN"}


@pytest.fixture(scope="module")
def archives():
    with one_worker_at_a_time("oss-fuzz-deps-src"):  # the fetch writes build/oss-fuzz-deps-src
        found = extra_seeds.libarchive_archives()
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
