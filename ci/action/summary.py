#!/usr/bin/env python3
"""Writes the gate's GitHub job summary (Markdown, appended to
$GITHUB_STEP_SUMMARY) from its reports, so a reviewer sees the verdict
without downloading artifacts: the outcome, doctor's checks, what was
published, the statements (the world statement's digest, the signing key
id) and the smoke calls. Every text a capsule, a config or the host wrote
is rendered inert (gate_text.inert_markdown): a code span it cannot close.
Usage: summary.py REPORT_DIR passed DETAIL | summary.py REPORT_DIR FAILED STEP REPORT_JSON"""
import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gate_text import failure_lines, inert_markdown as inert  # noqa: E402


def load(path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def heading(verdict, args):
    """The verdict line: fixed words, and what the gate was given as inert text."""
    if verdict == "passed":
        return [f"## dsh-capsule gate: passed ({inert(args[0])})", ""]
    return [f"## dsh-capsule gate: FAILED at {inert(args[0])}", "", inert(failure_lines(args[1])[0]), ""]


def main(out, verdict, *args):
    lines = heading(verdict, args)
    doctor = load(out / "doctor.json") or {}
    if doctor.get("checks"):
        lines += ["| doctor check | result | detail |", "|---|---|---|"]
        for c in doctor["checks"]:
            result = "ok" if c.get("ok") else f"FAIL {c.get('code', '')}"
            detail = c.get("detail", "") + (f" (fix: {c['fix']})" if c.get("fix") else "") + \
                (f" (warning: {c['warning']})" if c.get("warning") else "")
            lines.append(f"| {inert(c.get('check'))} | {inert(result)} | {inert(detail)} |")
        lines.append("")
    activation = load(out / "activation.json") or {}
    if activation.get("ok"):
        tools = ", ".join(inert(t["name"]) for t in activation.get("tools", []))
        sections = ", ".join(inert(s["id"]) for s in activation.get("promptSections", []))
        lines += [f"Published: tools {tools or 'none'}; prompt sections {sections or 'none'}.", ""]
    statements = out / "statements"
    world = statements / "world.intoto.json"
    if world.exists():
        digest = hashlib.sha256(world.read_bytes()).hexdigest()
        env = load(statements / "world.dsse.json")
        keyid = env["signatures"][0].get("keyid") if env and env.get("signatures") else None
        lines += ["| statement | sha256 | signed by |", "|---|---|---|",
                  f"| world.intoto.json | `{digest}` | {inert(keyid) if keyid else 'NOT signed'} |"]
        for vsa in sorted(statements.glob("vsa-*.intoto.json")):
            result = (load(vsa) or {}).get("predicate", {}).get("verificationResult", "?")
            lines.append(f"| {inert(vsa.name)} ({inert(result)}) | `{hashlib.sha256(vsa.read_bytes()).hexdigest()}` | "
                         f"{inert(keyid) if keyid else 'NOT signed'} |")
        lines.append("")
    calls = sorted(out.glob("call-*.json"), key=lambda p: int(p.stem.split("-")[1]))
    if calls:
        lines += ["| smoke call | result |", "|---|---|"]
        for c in calls:
            r = load(c) or {}
            err = r.get("error") or {}
            result = err.get("code") if err else ("isError" if r.get("result", {}).get("isError") else "ok")
            lines.append(f"| {inert(c.stem)} | {inert(result)} |")
        lines.append("")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(main(Path(sys.argv[1]), *sys.argv[2:]))
