#!/usr/bin/env python3
"""The current Debian 12 source package of each name, fetched and verified
along Debian's own chain of trust: each suite's InRelease is checked with
gpgv against debian-archive-keyring, the Sources index against the
SHA-256 InRelease gives, and every file (the .dsc included) against the
SHA-256 the index gives. The newest version across bookworm, its updates
and its security suite wins, so the build follows Debian's next security
update instead of breaking on it.

  debian_source.py DEST NAME...   writes the files into DEST and prints,
  per NAME, shell assignments: NAME_VERSION, NAME_ORIG, NAME_DEBIAN (file
  names in DEST) and NAME_SHA256S ("file=sha256 ..."), for build_deps.sh."""
import hashlib
import lzma
import os
import re
import subprocess
import sys
import tempfile
import urllib.request

SUITES = [("http://deb.debian.org/debian", "bookworm"),
          ("http://deb.debian.org/debian", "bookworm-updates"),
          ("http://deb.debian.org/debian-security", "bookworm-security")]
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"


def fetch(url):
    with urllib.request.urlopen(url, timeout=120) as r:
        return r.read()


def verified_release(mirror, suite):
    """The InRelease text of a suite, after gpgv accepted its signature."""
    data = fetch(f"{mirror}/dists/{suite}/InRelease")
    with tempfile.NamedTemporaryFile(suffix=".InRelease") as f:
        f.write(data)
        f.flush()
        p = subprocess.run(["gpgv", "--keyring", KEYRING, f.name], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{suite}: InRelease signature not valid against {KEYRING}:\n{p.stderr}")
    return data.decode()


def sources_index(mirror, suite):
    release = verified_release(mirror, suite)
    sha256 = release.split("\nSHA256:\n", 1)[1]
    m = re.search(r"^ ([0-9a-f]{64})\s+(\d+)\s+main/source/Sources\.xz$", sha256, re.M)
    if not m:
        sys.exit(f"{suite}: InRelease lists no main/source/Sources.xz")
    data = fetch(f"{mirror}/dists/{suite}/main/source/Sources.xz")
    if hashlib.sha256(data).hexdigest() != m.group(1) or len(data) != int(m.group(2)):
        sys.exit(f"{suite}: Sources.xz does not match its InRelease digest")
    return lzma.decompress(data).decode("utf-8", "replace")


def stanzas(index, name):
    for block in index.split("\n\n"):
        if re.search(rf"^Package: {re.escape(name)}$", block, re.M):
            fields = dict(re.findall(r"^([A-Za-z0-9-]+): ?(.*)$", block, re.M))
            files = re.findall(r"^ ([0-9a-f]{64}) \d+ (\S+)$",
                               block.split("Checksums-Sha256:", 1)[1].split("\n\n")[0], re.M)
            yield fields["Version"], fields["Directory"], dict((f, h) for h, f in files)


def newer(a, b):
    return subprocess.run(["dpkg", "--compare-versions", a, "gt", b]).returncode == 0


def main(dest, names):
    indexes = [(mirror, sources_index(mirror, suite)) for mirror, suite in SUITES]
    for name in names:
        best = None
        for mirror, index in indexes:
            for version, directory, files in stanzas(index, name):
                if best is None or newer(version, best[0]):
                    best = (version, f"{mirror}/{directory}", files)
        if not best:
            sys.exit(f"no source package {name} in {[s for _, s in SUITES]}")
        version, base, files = best
        for file, digest in files.items():
            path = os.path.join(dest, file)
            if not (os.path.exists(path) and hashlib.sha256(open(path, "rb").read()).hexdigest() == digest):
                data = fetch(f"{base}/{file}")
                if hashlib.sha256(data).hexdigest() != digest:
                    sys.exit(f"{file}: SHA-256 differs from the verified Sources index")
                with open(path, "wb") as f:
                    f.write(data)
        var = name.upper().replace("-", "_")
        orig = next(f for f in files if ".orig.tar." in f)
        debian = next(f for f in files if ".debian.tar." in f)
        print(f"{var}_VERSION='{version}'")
        print(f"{var}_ORIG='{orig}'")
        print(f"{var}_DEBIAN='{debian}'")
        print(f"{var}_SHA256S='" + " ".join(f"{f}={h}" for f, h in sorted(files.items())) + "'")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
