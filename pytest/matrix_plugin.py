"""Fail-closed matrix: every documented error code, the corpus cases that
trigger it, and whether each passed in this run; beside it, every claim of
docs/THREAT_MODEL.md (**[ID]**) and the cases or tests that prove it
(attack-corpus/claims.json). Printed at the end of any session that ran
corpus cases and written to build/fail-closed-matrix.md; with
CAPSULE_MATRIX_STRICT=1 the session fails on a gap (a documented code
without a case, unless ERRORS.md marks it "No corpus case"; a claim without
a mapping), a failure, a mapping that names an unknown claim, case or test,
or a claim all of whose cases ran and none passed."""
import json
import os
import re
import time
from collections import defaultdict

from capsule_lab import CORPUS, REPO, expected_codes

OUTCOMES = {}
TEST_OUTCOMES = {}  # every test's node id -> pass / FAIL / skipped
STARTED = [None]
LAST = [None]


def documented_codes():
    doc = (REPO / "docs" / "ERRORS.md").read_text()
    sections = re.split(r"^### ", doc, flags=re.M)[1:]
    return [(s.split("`")[1], "**No corpus case**" in s) for s in sections]


def case_codes():
    by_code, families = defaultdict(list), defaultdict(int)
    for path in sorted((CORPUS / "cases").rglob("*.json")):
        name = str(path.relative_to(CORPUS / "cases"))[:-5]
        families[name.split("/")[0]] += 1
        for code in expected_codes(json.loads(path.read_text())) or {"contained / ok"}:
            by_code[code].append(name)
    return by_code, families


def pytest_runtest_logreport(report):
    if report.failed or report.when == "call" or report.nodeid not in TEST_OUTCOMES:
        TEST_OUTCOMES[report.nodeid] = ("FAIL" if report.failed else
                                        "pass" if report.passed else report.outcome)
    if "test_attack_corpus.py::test_case[" not in report.nodeid:
        return
    if STARTED[0] is None:
        STARTED[0] = time.monotonic()
    LAST[0] = time.monotonic()
    case = report.nodeid.split("[", 1)[1][:-1]
    if report.failed or case not in OUTCOMES:
        OUTCOMES[case] = "FAIL" if report.failed else ("pass" if report.passed else report.outcome)


def build_matrix():
    by_code, families = case_codes()
    rows, gaps, failures = [], [], []
    for code, exempt in documented_codes() + [("contained / ok", False)]:
        cases = by_code.get(code, [])
        ran = [OUTCOMES.get(c, "not run") for c in cases]
        passed = ran.count("pass")
        bad = [c for c, r in zip(cases, ran) if r != "pass"]
        failures += [c for c, r in zip(cases, ran) if r == "FAIL"]
        if not cases and not exempt:
            gaps.append(code)
        status = ("EXEMPT" if exempt and not cases else "GAP" if not cases
                  else "ok" if not bad else "FAIL")
        rows.append((code, len(cases), passed, status, ", ".join(cases[:3]) + (" ..." if len(cases) > 3 else "")))
    lines = ["| code | cases | passed | status | examples |", "|---|---:|---:|---|---|"]
    lines += [f"| `{c}` | {n} | {p} | {s} | {e} |" for c, n, p, s, e in rows]
    lines += ["", "| family | cases |", "|---|---:|"]
    lines += [f"| {f} | {n} |" for f, n in sorted(families.items())]
    lines.append(f"| **total** | {sum(families.values())} |")
    return "\n".join(lines), gaps, failures


def claim_ids():
    doc = (REPO / "docs" / "THREAT_MODEL.md").read_text()
    return list(dict.fromkeys(re.findall(r"\*\*\[([CLR]\d+)\]\*\*", doc)))


def case_exists(name):
    if "::" not in name:
        return (CORPUS / "cases" / f"{name}.json").exists()
    path, test = name.split("::", 1)
    f = REPO / path
    return f.exists() and f"def {test}(" in f.read_text()


def case_outcome(name):
    node = name if "::" in name else f"pytest/test_attack_corpus.py::test_case[{name}]"
    if node in TEST_OUTCOMES:
        return TEST_OUTCOMES[node]
    # A parametrized test: every instance that ran must pass.
    ran = [v for k, v in TEST_OUTCOMES.items() if k.startswith(node + "[")]
    return "FAIL" if "FAIL" in ran else "pass" if ran else "not run"


def build_claims():
    mapping = json.loads((CORPUS / "claims.json").read_text())
    mapping.pop("_", None)
    ids = claim_ids()
    problems = [f"claims.json names unknown claim {k}" for k in mapping if k not in ids]
    rows = []
    for cid in ids:
        cases = mapping.get(cid, [])
        problems += [f"{cid}: no such case or test {c}" for c in cases if not case_exists(c)]
        ran = [case_outcome(c) for c in cases]
        passed = ran.count("pass")
        status = ("GAP" if not cases else "FAIL" if "FAIL" in ran else "ok" if passed
                  else "not run" if "not run" in ran else "NO PASS")
        if status in ("GAP", "FAIL", "NO PASS"):
            problems.append(f"{cid}: {status}")
        shown = ", ".join(c.replace("pytest/", "") for c in cases[:3]) + (" ..." if len(cases) > 3 else "")
        rows.append(f"| {cid} | {len(cases)} | {passed} | {status} | {shown} |")
    table = "\n".join(["| claim | cases | passed | status | examples |", "|---|---:|---:|---|---|", *rows])
    return table, problems


def is_worker(config):
    """A pytest-xdist worker sees only its share of the tests; the matrix is
    built once, by the controller, from every worker's reports."""
    return hasattr(config, "workerinput")


def pytest_terminal_summary(terminalreporter, config):
    if not OUTCOMES or is_worker(config):
        return
    table, gaps, failures = build_matrix()
    wall = LAST[0] - STARTED[0]
    claims, problems = build_claims()
    text = (f"# Fail-closed matrix\n\n{table}\n\nCorpus wall time: {wall:.1f} s\n\n"
            f"# Threat-model claims (docs/THREAT_MODEL.md -> attack-corpus/claims.json)\n\n{claims}\n")
    out = REPO / "build" / "fail-closed-matrix.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(text)
    terminalreporter.write_sep("=", "fail-closed matrix")
    terminalreporter.write_line(text)
    if gaps:
        terminalreporter.write_line(f"GAPS (documented codes without a case): {gaps}")
    if failures:
        terminalreporter.write_line(f"FAILED CASES: {failures}")
    if problems:
        terminalreporter.write_line(f"CLAIM PROBLEMS: {problems}")


def pytest_sessionfinish(session, exitstatus):
    if os.environ.get("CAPSULE_MATRIX_STRICT") == "1" and OUTCOMES and not is_worker(session.config):
        _, gaps, failures = build_matrix()
        _, problems = build_claims()
        if gaps or failures or problems:
            session.exitstatus = 1
