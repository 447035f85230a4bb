"""make prove-fixes locates each defence by its C tokens, not its layout:
every revert matches exactly one place, before and after a reformat."""
import re
import sys

from capsule_lab import REPO

sys.path.insert(0, str(REPO / "ci"))
import prove_hazard_fixes as prove  # noqa: E402


def reformat(text):
    """What a formatter might do: re-indent and break argument lists."""
    return re.sub(r"[ \t]+", "  ", text).replace(", ", ",\n      ").replace("(", "(\n  ")


def test_every_revert_matches_one_place_whatever_the_layout():
    for fix, path, old, new, cases in prove.REVERTS:
        text = (REPO / path).read_text()
        for variant in (text, reformat(text)):
            n = len(prove.token_pattern(old).findall(variant))
            assert n == 1, f"{fix}: {n} matches in {path}"
        assert cases, fix


def test_every_reverted_file_still_compiles(tmp_path):
    """A revert that does not build stops make prove-fixes; catch it here,
    with the project's own warnings as errors (JavaScript: node --check)."""
    import subprocess
    flags = ["-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Wshadow", "-Wformat=2",
             "-Wstrict-prototypes", "-Wno-format-truncation", "-Werror", "-fsyntax-only"]
    includes = [f"-I{REPO / d}" for d in ("common", "launcher", "host", "build/gen", "build/asan/gen")]
    for fix, path, old, new, cases in prove.REVERTS:
        mutant = tmp_path / path.replace("/", "_")
        mutant.write_text(prove.revert((REPO / path).read_text(), old, new, fix, path))
        # The mutant's own folder first, as its quoted includes expect.
        own = [f"-I{(REPO / path).parent}"]
        check = ["node", "--check"] if path.endswith(".mjs") else ["cc", *flags, *own, *includes]  # reads
        p = subprocess.run([*check, str(mutant)], capture_output=True, text=True)
        assert p.returncode == 0, f"{fix}: {p.stderr[:2000]}"


def test_a_fix_file_with_an_unknown_or_missing_key_stops_the_proof(tmp_path):
    """The fix files are the whole list of defences: a misspelt key must not
    drop a revert silently."""
    import json
    import pytest
    good = {"fix": "f", "file": "host/host.c", "old": "x", "new": "", "cases": ["a/b"]}
    (tmp_path / "ok.json").write_text(json.dumps(good))
    assert prove.load_reverts(tmp_path) == [("f", "host/host.c", "x", "", ["a/b"])]
    for bad in ({**good, "case": ["a/b"]}, {k: v for k, v in good.items() if k != "new"}):
        (tmp_path / "bad.json").write_text(json.dumps(bad))
        with pytest.raises(SystemExit):
            prove.load_reverts(tmp_path)
    assert len(prove.REVERTS) == len(list(prove.FIXES.glob("*.json"))) > 80


def test_a_case_that_errs_or_is_skipped_is_neither_a_pass_nor_a_failure(tmp_path):
    """A revert's case that cannot run (a fixture error, a skip) proves
    nothing either way; on the unmodified tree it must stop the proof,
    never count as the pass a survivor's verdict is measured against."""
    (tmp_path / "test_demo.py").write_text(
        "import pytest\n"
        "@pytest.fixture\n"
        "def broken():\n"
        "    raise RuntimeError('no lab')\n"
        "def test_ok(): pass\n"
        "def test_fails(): assert False\n"
        "def test_skipped(): pytest.skip('no such host feature')\n"
        "def test_errs(broken): pass\n"
        "@pytest.mark.parametrize('k', ['a', 'ab'])\n"
        "def test_p(k): assert k == 'ab'\n")
    cases = [f"test_demo.py::{t}" for t in
             ("test_ok", "test_fails", "test_skipped", "test_errs", "test_p[a]", "test_p[ab]")]
    failed, passed, _ = prove.run_cases(tmp_path, cases)
    assert failed == {"test_demo.py::test_fails", "test_demo.py::test_p[a]"}
    assert passed == {"test_demo.py::test_ok", "test_demo.py::test_p[ab]"}
    # A node id without its parameters runs them all: one failing fails it.
    failed, passed, _ = prove.run_cases(tmp_path, ["test_demo.py::test_p"])
    assert (failed, passed) == ({"test_demo.py::test_p"}, set())
