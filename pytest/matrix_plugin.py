"""Fail-closed matrix: every documented error code, the corpus cases that
trigger it, and whether each passed in this run. Printed at the end of any
session that ran corpus cases and written to build/fail-closed-matrix.md;
with CAPSULE_MATRIX_STRICT=1 the session fails on a gap (a documented code
without a case, unless ERRORS.md marks it "No corpus case") or a failure."""
import json
import os
import re
import time
from collections import defaultdict

from capsule_lab import CORPUS, REPO, expected_codes

OUTCOMES = {}
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


def pytest_terminal_summary(terminalreporter):
    if not OUTCOMES:
        return
    table, gaps, failures = build_matrix()
    wall = LAST[0] - STARTED[0]
    text = f"# Fail-closed matrix\n\n{table}\n\nCorpus wall time: {wall:.1f} s\n"
    out = REPO / "build" / "fail-closed-matrix.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(text)
    terminalreporter.write_sep("=", "fail-closed matrix")
    terminalreporter.write_line(text)
    if gaps:
        terminalreporter.write_line(f"GAPS (documented codes without a case): {gaps}")
    if failures:
        terminalreporter.write_line(f"FAILED CASES: {failures}")


def pytest_sessionfinish(session, exitstatus):
    if os.environ.get("CAPSULE_MATRIX_STRICT") == "1" and OUTCOMES:
        _, gaps, failures = build_matrix()
        if gaps or failures:
            session.exitstatus = 1
