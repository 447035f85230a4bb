#!/usr/bin/env python3
"""Mutation proof for every defence: for each fix, copy the tree, revert
just that fix, rebuild, and require that the cases guarding it now FAIL
(and pass on the unmodified tree). A case is a corpus id (family/name) or a
pytest node id (file::test). Prints a table; exits 1 if any case survives
its fix's removal. Run: make prove-fixes"""
import concurrent.futures
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from kernel_probe import i386_entry_faults

REPO = Path(__file__).resolve().parent.parent

# One file per defence, beside the cases that guard it: adding a defence is
# adding attack-corpus/fixes/<name>.json (keys: attack-corpus/README.md).
FIXES = REPO / "attack-corpus" / "fixes"
FIX_KEYS = {"fix", "about", "file", "old", "new", "cases"}


def load_reverts(folder=FIXES):
    """[(fix, file, exact text to remove or replace, replacement, guarding
    cases)] from the fix files, in file-name order; a file with an unknown
    or a missing key stops the proof."""
    reverts = []
    for f in sorted(folder.glob("*.json")):
        entry = json.loads(f.read_text())
        if set(entry) - FIX_KEYS or {"fix", "file", "old", "new", "cases"} - set(entry):
            sys.exit(f"{f}: keys are {sorted(FIX_KEYS)} ('about' optional), not {sorted(entry)}")
        reverts.append((entry["fix"], entry["file"], entry["old"], entry["new"], entry["cases"]))
    return reverts


REVERTS = load_reverts()


# Cases that cannot tell their fix apart on this machine, and why: printed,
# not hidden, and not counted as failures of the proof.
KNOWN_SURVIVORS = {
    ("seccomp filter passed to bwrap", "hazards/bpf-denied"):
        "kernel.unprivileged_bpf_disabled=2 here: the kernel answers EPERM too",
}


def known_survivors():
    """KNOWN_SURVIVORS, and those of a kernel feature detected here."""
    known = dict(KNOWN_SURVIVORS)
    if i386_entry_faults():
        known[("seccomp filter passed to bwrap", "hazards/i386-abi-denied")] = (
            "this kernel has no i386 entry (int $0x80 faults with SIGSEGV outside any sandbox): "
            "the attack is impossible here, so the filter's rule cannot be told apart")
    return known


# C tokens: string literals, identifiers/numbers, then any other character.
TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\w+|[^\w\s]')


def token_pattern(code):
    """A regex matching code whatever its layout: the same tokens, with any
    whitespace (including line breaks and re-indentation) between them, so a
    reformat of the source cannot silently unmatch a revert."""
    return re.compile(r"\s*".join(re.escape(t) for t in TOKEN.findall(code)))


def revert(text, old, new, fix, path):
    matches = list(token_pattern(old).finditer(text))
    if len(matches) != 1:
        sys.exit(f"revert for '{fix}' matches {len(matches)} places in {path}, not exactly one")
    start, end = matches[0].span()
    # A revert written as whole lines (old starts with indentation) replaces
    # the line's own indentation too, so new's layout is what compiles.
    if old[:1].isspace():
        while start > 0 and text[start - 1] in " \t":
            start -= 1
    if old.endswith("\n") and text[end:end + 1] == "\n":
        end += 1
    return text[:start] + new + text[end:]


def run_cases(tree, cases):
    """({failed cases}, {passed cases}, the run): each case by its own
    summary line, so a case that errored, was skipped or never ran is in
    neither set and cannot pass for a pass."""
    bindir = tree / "build" / "bin"
    ids = {c: c if "::" in c else f"pytest/test_attack_corpus.py::test_case[{c}]" for c in cases}
    p = subprocess.run(["/usr/bin/python3", "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
                        "-p", "no:matrix_plugin", *ids.values()], cwd=tree, capture_output=True,
                       text=True, env={"PATH": "/usr/local/bin:/usr/bin:/bin", "CAPSULE_BIN": str(bindir)})
    lines = p.stdout.splitlines()

    def said(word, node):  # a node id given without its parameters selects them all
        return any(line.startswith(f"{word} {node}") and line[len(word) + 1 + len(node):][:1] in ("", " ", "[")
                   for line in lines)
    failed = {c for c, node in ids.items() if said("FAILED", node)}
    passed = {c for c, node in ids.items()
              if said("PASSED", node) and not said("ERROR", node) and c not in failed}
    return failed, passed, p


def share_node_modules(src, dest):
    """The tests' npm packages (MCP peers, the sigstore verifier, DSH's
    packages: test tooling, never a reverted file) that src has installed,
    linked into dest: a mutant must not download them again for each revert."""
    for modules in src.glob("pytest/*/node_modules"):
        link = dest / modules.relative_to(src)
        if not link.exists():
            link.symlink_to(modules.resolve(), target_is_directory=True)


def prove(tmp, base, revert_entry, slot, survivors_here):
    """Reverts one fix in a copy of base (slot: which worker's copy), builds
    it, runs its cases; returns its rows and the cases that survived."""
    fix, path, old, new, cases = revert_entry
    tree = Path(tmp) / f"mutant-{slot}"
    if tree.exists():
        shutil.rmtree(tree)
    # The base's build comes along (mtimes kept): make recompiles only the
    # reverted file, newer than its object (a .mjs of the DSH row compiles
    # to nothing). The Makefile tracks no header dependencies, so a header
    # revert starts clean.
    shutil.copytree(base, tree, symlinks=True, ignore=shutil.ignore_patterns("node_modules"))
    share_node_modules(base, tree)
    if path.endswith(".h"):
        shutil.rmtree(tree / "build")
    src = tree / path
    text = src.read_text()
    src.write_text(revert(text, old, new, fix, path))
    began = time.monotonic()
    built = subprocess.run(["make", "-s", "-C", str(tree), "-j2"], capture_output=True, text=True)
    build_s = time.monotonic() - began
    if built.returncode != 0:
        sys.exit(f"revert for '{fix}' does not build:\n{built.stderr[-2000:]}")
    began = time.monotonic()
    failed, passed, _ = run_cases(tree, cases)
    cases_s = time.monotonic() - began
    with TIMES_LOCK:
        TIMES["revert builds"] += build_s
        TIMES["revert cases"] += cases_s
        SLOWEST.append((build_s + cases_s, fix, build_s, cases_s))
    rows, survivors = [], []
    for c in cases:
        known = survivors_here.get((fix, c))
        verdict = ("FAILS (fix proven)" if c in failed else
                   "DID NOT RUN (error or skip)" if c not in passed else
                   f"still passes: {known}" if known else "STILL PASSES")
        rows.append((fix, c, verdict))
        if c not in failed and (c not in passed or not known):
            survivors.append((fix, c))
    return rows, survivors


# Where the proof's time goes (seconds), printed at the end: builds and
# cases summed over the reverts, which run PROVE_JOBS at a time.
TIMES = {"base build": 0.0, "base cases": 0.0, "revert builds": 0.0, "revert cases": 0.0}
TIMES_LOCK = threading.Lock()
SLOWEST = []  # (seconds, fix, build, cases) of each revert


def main():
    started = time.monotonic()
    survivors_here = known_survivors()
    # PROVE_ONLY=<regex> proves only the fixes whose name matches (local runs).
    only = os.environ.get("PROVE_ONLY")
    reverts = [r for r in REVERTS if not only or re.search(only, r[0])]
    if not reverts:  # else pytest gets no ids and collects the whole tree
        sys.exit(f"PROVE_ONLY={only!r} matches no fix (it is searched in each fix's sentence)")
    # Two mutants at a time on two cores (PROVE_JOBS): the cases mostly wait
    # on cells, and each mutant has its own tree, build, staging and
    # processes (every case counts only what its own run started).
    jobs = max(1, int(os.environ.get("PROVE_JOBS", str(min(2, os.cpu_count() or 1)))))
    rows, survivors = [], []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        shutil.copytree(REPO, base, ignore=shutil.ignore_patterns("build", "node_modules", ".git"))
        share_node_modules(REPO, base)
        began = time.monotonic()
        subprocess.run(["make", "-s", "-C", str(base), "-j2"], check=True, capture_output=True)
        TIMES["base build"] = time.monotonic() - began
        all_cases = sorted({c for r in reverts for c in r[4]})
        began = time.monotonic()
        failed, passed, p = run_cases(base, all_cases)
        TIMES["base cases"] = time.monotonic() - began
        not_passed = sorted(set(all_cases) - passed)
        if failed or not_passed or p.returncode != 0:
            print(p.stdout[-3000:])
            sys.exit("cases do not pass on the unmodified tree (failed, errored or skipped): "
                     + ", ".join(not_passed))
        slots = queue.Queue()
        for i in range(jobs):
            slots.put(i)

        def one(entry):
            slot = slots.get()
            try:
                return prove(tmp, base, entry, slot, survivors_here)
            finally:
                slots.put(slot)
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            for r, s in pool.map(one, reverts):  # in REVERTS order, whatever finished first
                rows += r
                survivors += s
    width = max(len(r[0]) for r in rows)
    print(f"{'fix reverted':<{width}}  {'case':<44}  with fix  reverted")
    for fix, c, verdict in rows:
        print(f"{fix:<{width}}  {c.replace('pytest/test_containment.py', 'containment'):<44}  pass      {verdict}")
    print(f"time: {time.monotonic() - started:.0f} s in all; " +
          ", ".join(f"{k} {v:.0f} s" for k, v in TIMES.items()) + f" ({jobs} at a time)")
    for total, fix, build_s, cases_s in sorted(SLOWEST, reverse=True)[:5]:
        print(f"  slowest: {fix}: {total:.0f} s (build {build_s:.0f} s, cases {cases_s:.0f} s)")
    if survivors:
        sys.exit(f"{len(survivors)} case(s) do not depend on their fix: {survivors}")
    proven = sum(1 for r in rows if r[2].startswith("FAILS"))
    print(f"{proven} of {len(rows)} guarded cases fail when their fix is reverted; "
          f"{len(rows) - proven} known survivor(s) explained above")


if __name__ == "__main__":
    main()
