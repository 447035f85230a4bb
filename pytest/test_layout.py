"""The house as a reviewer reads it (issue 26): host/ in folders by layer
with no include-or-call circle among its files, shallow headers, private
headers that are private in fact, one library rule for the host's
sources, and a unit test file per boundary module. ci/host_layout.py
measures; these tests hold the line."""
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import PurePosixPath

from capsule_lab import BIN, REPO

sys.path.insert(0, str(REPO / "ci"))
import host_layout  # noqa: E402

LAYERS = ["admit", "cell", "attest", "statement", "call", "serve"]
# The modules that decide at a boundary, each with unit/test_<module>.c.
BOUNDARY_MODULES = ["policy", "workspace", "requests", "manifest", "config", "describe",
                    "call_result", "capsule", "names", "schema", "cell_reports",
                    "launch_document", "verdict", "attest_report", "bwrap_diagnosis",
                    "jsonrpc_id", "launch_doc", "bwrap_argv", "frame", "strict_json",
                    "safe_text", "safe_open", "digest", "node_version", "subproc", "dsse", "statement", "signing_key"]


def test_host_is_in_folders_by_layer():
    folders = sorted(p.name for p in (REPO / "host").iterdir() if p.is_dir())
    assert folders == sorted(LAYERS)
    loose = sorted(p.name for p in (REPO / "host").iterdir() if p.is_file())
    assert loose == ["cli.c", "cli.h", "cli_help.c", "cli_help.h", "doctor.c", "doctor.h", "host.c", "host.h",
                     "host_state.h", "main.c",
                     "scaffold.c", "scaffold.h", "verify.c", "verify.h"], loose


def test_no_two_host_files_include_or_call_each_other_in_a_circle():
    m = host_layout.measure(REPO, BIN.parent / "obj")
    assert m["circles"] == [], m["circles"]


def test_headers_nest_at_most_four_deep():
    """Headers declare what they only point to (C11 repeats a typedef)
    instead of including it: no host file sees project headers nested
    deeper than four (before issue 26: seven)."""
    deepest = 0
    for f in sorted((REPO / "host").rglob("*.c")):
        p = subprocess.run(["cc", "-std=c11", "-D_GNU_SOURCE", "-Icommon", "-Ihost", "-Ilauncher",
                            f"-I{BIN.parent / 'gen'}", "-H", "-fsyntax-only", str(f.relative_to(REPO))],
                           cwd=REPO, capture_output=True, text=True)
        assert p.returncode == 0, p.stderr[-2000:]
        for line in p.stderr.splitlines():
            dots, _, path = line.partition(" ")
            if dots and set(dots) == {"."} and re.match(r"(\./)?(host|common|launcher)/", path):
                deepest = max(deepest, len(dots))
    assert deepest <= 4, deepest


def includes(path):
    return re.findall(r'^\s*#\s*include\s+"([^"]+)"', path.read_text(), re.M)


def test_private_headers_are_private_in_fact():
    sources = [*REPO.glob("host/**/*.[ch]"), *REPO.glob("fuzz/harness/*.c"), *REPO.glob("unit/*.[ch]"),
               *REPO.glob("bench/*.c")]
    # serve_output.h is the serve folder's own too (issue 51.3: it was
    # serve_private.h, named after nothing it holds).
    for private in [*REPO.glob("host/**/*_private.h"), REPO / "host" / "serve" / "serve_output.h"]:
        for src in sources:
            if src.parent != private.parent:
                names = [n.rsplit("/", 1)[-1] for n in includes(src)]
                assert private.name not in names, f"{src} includes {private}"
    # JSON-RPC is the protocol's: the scheduler carries no constant of it.
    users = sorted(str(s.relative_to(REPO)) for s in sources if "jsonrpc_codes.h" in includes(s))
    assert users == ["host/serve/mcp.c", "host/serve/serve_output.c"], users
    for f in ("host/serve/scheduler.c", "host/serve/serve.c"):
        assert not re.search(r"JSONRPC_|-32[0-9]{3}", (REPO / f).read_text()), f


def test_no_list_of_host_sources_outside_the_library_rule():
    build_files = [REPO / "Makefile", REPO / "fuzz" / "Makefile", REPO / "bench" / "Makefile",
                   REPO / "fuzz" / "oss-fuzz" / "build.sh", REPO / ".clusterfuzzlite" / "build.sh"]
    for f in build_files:
        if not f.exists():
            continue
        named = re.findall(r"host/[\w./*-]*\.c\b", f.read_text())
        allowed = ["host/main.c"] * (f == REPO / "Makefile")
        assert sorted(set(named)) == sorted(set(allowed)), (f, named)


def test_every_boundary_module_has_its_unit_test_file():
    missing = [m for m in BOUNDARY_MODULES if not (REPO / "unit" / f"test_{m}.c").exists()]
    assert not missing, missing
    # One module per file: each test file is named for a module of the tree.
    stems = {p.stem for d in ("host", "common", "launcher") for p in (REPO / d).rglob("*.[ch]")}
    for t in (REPO / "unit").glob("test_*.c"):
        assert t.stem[5:] in stems, f"{t.name} names no module"


def test_readme_and_threat_model_name_the_layers():
    readme = (REPO / "HACKING.md").read_text()
    for layer in LAYERS:
        assert f"| `host/{layer}/` |" in readme, layer
    threat = (REPO / "docs" / "THREAT_MODEL.md").read_text()
    table = threat[threat.index("| layer |"):]
    table = table[:table.index("\n\n")]
    header = [c.strip().lower() for c in table.splitlines()[0].strip("|").split("|")]
    assert "code" in header, header
    named = re.findall(r"`((?:host|launcher|common|probe)/[\w./-]+)`", table)
    assert named, "the code column names files"
    for path in named:
        assert (REPO / path).exists(), path


# A repository path as docs and comments write it: a top-level folder of
# ours, then a name with an extension (phrases like "launcher/bwrap" have none).
REPO_PATH = re.compile(r"(?<![\w./-])((?:host|common|launcher|probe|pytest|ci|fuzz|attack-corpus|docs|dsh|"
                       r"guest|bench|examples|unit|\.ci)/[\w./-]*\.\w+)\b")


def test_every_path_named_in_docs_and_comments_exists():
    """Issue 35: after the move to layer folders, eight paths in docs and
    comments still named files that had moved. A path written in a tracked
    text or source file is a tracked file (or a folder) of this tree."""
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True,
                             check=True).stdout.split()
    known = set(tracked) | {str(p) for f in tracked for p in PurePosixPath(f).parents}
    stale = []
    for f in tracked:
        if not re.search(r"\.(md|c|h|py|mjs|cjs|js|sh|yml|yaml)$|Makefile$", f):
            continue
        text = (REPO / f).read_text(errors="replace")
        for m in REPO_PATH.finditer(text):
            path = m.group(1).rstrip(".")
            if path not in known and not any(ch in path for ch in "*<{"):
                stale.append(f"{f}: {path}")
    assert stale == [], stale


def test_the_fuzz_readme_lists_every_harness():
    harnesses = sorted(p.stem[len("fuzz_"):] for p in (REPO / "fuzz" / "harness").glob("fuzz_*.c"))
    listed = re.findall(r"^\| `(\w+)` \|", (REPO / "fuzz" / "README.md").read_text(), re.M)
    assert sorted(listed) == harnesses, (listed, harnesses)


def test_every_prove_fixes_revert_still_matches_one_place():
    """A rename that unmatches a revert fails here, in make test, not an
    hour later in make prove-fixes."""
    import prove_hazard_fixes
    for fix, path, old, _new, _cases in prove_hazard_fixes.REVERTS:
        found = len(prove_hazard_fixes.token_pattern(old).findall((REPO / path).read_text()))
        assert found == 1, f"revert for '{fix}' matches {found} places in {path}"


def test_calls_point_down_the_layers():
    """admit -> cell -> attest -> activation -> call -> serve, read from the
    built objects' symbols: no call points up a layer (before issue 35:
    three, cell -> attest and attest -> call twice)."""
    assert host_layout.upward_calls(REPO, BIN.parent / "obj") == []


def test_every_host_file_is_in_one_module_with_its_header_and_prefix():
    """One header per module, named after it, declaring exactly that
    module's functions, each named with the module's prefix (README, "Where
    code goes"): read from the headers and the built objects."""
    assert host_layout.module_rule_breaks(REPO, BIN.parent / "obj") == []


def test_no_host_function_is_longer_than_80_lines():
    """A function a reviewer reads in one screen (issue 35: serve_run was
    100 lines, doctor_run 94)."""
    lengths = host_layout.function_lengths(REPO)
    assert len(lengths) > 300, "the measure finds the host's functions"
    assert [x for x in lengths if x[0] > 80] == [], lengths[:3]


def test_the_module_rule_catches_a_file_without_header_a_bare_name_and_a_stray_declaration(tmp_path):
    """The rule above would fail: a file no header names, a visible helper
    with a bare name, a header declaring what its module does not define."""
    objdir = BIN.parent / "obj"
    tidy = "/".join(["host", "cell", "tidy.c"])  # a new file no header names
    shutil.copytree(REPO / "host", tmp_path / "host")
    shutil.copytree(objdir / "host", tmp_path / "obj" / "host")
    (tmp_path / tidy).write_text("int tidy_up(void);\nint tidy_up(void) { return 0; }\n")
    with open(tmp_path / "host/cell/cell_io.c", "a") as f:
        f.write("\nint reap_all(void);\nint reap_all(void) { return 1; }\n")
    with open(tmp_path / "host/cell/cell_orphans.h", "a") as f:
        f.write("\nint cell_orphans_count(void);\n")
    for c in (tidy, "host/cell/cell_io.c"):
        subprocess.run(["cc", "-std=c11", "-D_GNU_SOURCE", "-Icommon", "-Ihost", "-Ilauncher",
                        f"-I{BIN.parent / 'gen'}", f"-I{tmp_path / 'host'}", "-c", str(tmp_path / c),
                        "-o", str(tmp_path / "obj" / c.replace(".c", ".o"))], cwd=REPO, check=True)
    breaks = host_layout.module_rule_breaks(tmp_path, tmp_path / "obj")
    assert breaks == [
        "host/cell/cell_io.c: reap_all does not start with its module's name cell_",
        "host/cell/cell_io.c: reap_all is not declared in host/cell/cell.h",
        f"{tidy}: no module header (a .h named after it or a prefix of it)",
        "host/cell/cell_orphans.h declares cell_orphans_count, which its module does not define",
    ], breaks


def test_fuzz_coverage_targets_name_real_harnesses_files_and_functions():
    """fuzz/coverage.py measures each harness on files, some narrowed to
    named functions: a renamed file or function would drop out of the
    figure silently (issue 35). Each target exists, and each harness of the
    folder (the one list, fuzz/Makefile reads it) has targets."""
    # By path: "coverage" is also the name of a well-known Python package.
    spec = importlib.util.spec_from_file_location("fuzz_coverage", REPO / "fuzz" / "coverage.py")
    fuzz_coverage = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fuzz_coverage)
    harnesses = sorted(p.stem[len("fuzz_"):] for p in (REPO / "fuzz" / "harness").glob("fuzz_*.c"))
    assert sorted(fuzz_coverage.TARGETS) == harnesses
    for harness, targets in fuzz_coverage.TARGETS.items():
        for target in targets:
            path, _, functions = target.partition(":")
            source = (REPO / path).read_text()
            for name in filter(None, functions.split(",")):
                assert re.search(rf"^\S[^\n;]*\b{name}\([^\n;]*$", source, re.M), f"{harness}: {path} has no {name}()"


# What writes a shared thing in the tree when a test runs it.
SHARED_WRITES = ('"npm", "ci"', '"npm", "install"', '"make"', 'build_deps.sh"', "libarchive_archives()",
                 '"useradd"', '"cc", ')


def test_every_shared_write_in_the_tests_is_one_worker_at_a_time():
    """make test runs pytest workers side by side: an npm install, a make or
    a helper build into the tree outside one_worker_at_a_time (or a module
    kept on one worker by its xdist_group) would be written twice at once.
    A line that writes only below its own test's tmp, or reads, says so:
    "# own tmp" or "# reads". test_dsh_cli.py runs alone (make test-dsh)."""
    unguarded = []
    files = sorted((REPO / "pytest").glob("*.py"))
    for f in files:
        text = f.read_text()
        if f.name in ("test_dsh_cli.py", "test_layout.py") or "pytestmark = pytest.mark.xdist_group" in text:
            continue
        # A helper whose every importer keeps itself on one worker.
        group = re.search(r"^(\w+_GROUP) = ", text, re.M)
        importers = [g for g in files if f"from {f.stem} import" in g.read_text()]
        if group and importers and all(f"pytestmark = pytest.mark.xdist_group({group[1]})" in g.read_text()
                                       for g in importers):
            continue
        lines = text.splitlines()
        for i, line in enumerate(lines):
            if "# own tmp" in line or "# reads" in line:
                continue
            if any(w in line for w in SHARED_WRITES) and not any(
                    "one_worker_at_a_time(" in above for above in lines[max(0, i - 4):i + 1]):
                unguarded.append(f"{f.name}:{i + 1}: {line.strip()}")
    assert unguarded == []


# The bwrap argvs this tree writes (issue 51): the cell's, built in one
# place, and the two deliberate other sandboxes, each saying at its head why
# it is not a cell.
BWRAP_ARGV_FILES = {"launcher/bwrap_argv.c": "the one place that says what a cell is",
                    "host/attest/snapshot.c": "The deliberate other sandbox",
                    "host/doctor.c": "deliberately not cells"}


def test_every_bwrap_argv_is_the_cells_or_a_documented_other_sandbox():
    found = set()
    for folder in ("host", "common", "launcher", "probe"):
        for f in (REPO / folder).rglob("*.c"):
            if re.search(r'"--unshare-(all|user)"', f.read_text()):
                found.add(str(f.relative_to(REPO)))
    assert found == set(BWRAP_ARGV_FILES), sorted(found ^ set(BWRAP_ARGV_FILES))
    for f, says in BWRAP_ARGV_FILES.items():
        assert says in (REPO / f).read_text(), (f, says)
    cell = (REPO / "launcher" / "bwrap_argv.c").read_text()
    head = cell[:cell.index("#include")]
    for f in BWRAP_ARGV_FILES:
        if f != "launcher/bwrap_argv.c":
            assert f in head, f"launcher/bwrap_argv.c's head does not name {f}"


def test_a_header_of_the_same_folder_is_included_by_its_bare_name():
    """Issue 51.3: own-folder headers were spelled two ways ("serve/mcp.h"
    beside "serve_log.h" in one file). A host file names a header of its
    own folder bare, and another folder's with that folder."""
    twice = []
    for f in sorted((REPO / "host").glob("*/*.[ch]")):
        folder = f.parent.name
        for m in re.finditer(rf'#include "{folder}/(\w+\.h)"', f.read_text()):
            twice.append(f"{f.relative_to(REPO)}: {folder}/{m[1]}")
    assert twice == []
