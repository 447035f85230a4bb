#!/usr/bin/env python3
"""Text from a capsule, a config or the host, made inert for the surfaces
GitHub renders (issue 47.3): the job summary (Markdown with HTML) and
workflow commands (annotations). A capsule's tool name, section id or
field can be quoted in an error; none of it may become markup, a link, an
image, a comment that hides the rest, a line break in an annotation, or
text that reads in another order.

  gate_text.py error TITLE REPORT_JSON   the ::error annotation for a failed
      step on stdout (title and message escaped as GitHub's workflow-command
      rules say), and the same for people on stderr, a "gate:" line each
  gate_text.py warning TITLE MESSAGE     a ::warning annotation, escaped alike

summary.py renders every such text through inert_markdown."""
import json
import re
import sys

# Controls and characters that draw nothing but reorder or hide text:
# C0/C1 controls and DEL, bidi embeddings, overrides and isolates, the line
# and paragraph separators, zero-width and other invisible marks.
INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def visible(text):
    """Every invisible or reordering character as a \\uXXXX escape."""
    return INVISIBLE.sub(lambda m: f"\\u{ord(m.group()):04x}", str(text))


def inert_markdown(text):
    """text as a Markdown code span it cannot close: no HTML, no link, no
    emphasis, no comment is read inside one. The fence is one backtick
    longer than any run of backticks in the text; "|" is escaped so that a
    table cell stays one cell (GitHub removes that escape in a table)."""
    body = visible(text).replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if body.startswith("`") or body.endswith("`") or not body.strip() else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def workflow_data(text):
    """A workflow command's message: % escaped as %25 (GitHub's rules), its
    lines joined by %0A, and every other control or invisible character
    (CR among them) made a visible escape."""
    return "%0A".join(visible(line).replace("%", "%25") for line in str(text).split("\n"))


def workflow_property(text):
    """A workflow command's property value (title=...): also ":" and ","."""
    return workflow_data(text).replace(":", "%3A").replace(",", "%2C")


def failure_lines(report_path):
    """What a step's JSON report says went wrong, one line each."""
    try:
        with open(report_path) as f:
            report = json.load(f)
    except (OSError, ValueError):
        return ["no JSON report"]
    lines = []
    err = report.get("error") or {}
    if err:
        lines.append(f"{err.get('code')}: {err.get('message')}")
    for c in report.get("checks", []):
        if not c.get("ok"):
            lines.append(f"{c.get('code')} ({c.get('check')}): {c.get('detail')}" +
                         (f" -- fix: {c['fix']}" if c.get("fix") else ""))
    return lines or ["the step failed without saying why"]


def error(title, report_path):
    lines = failure_lines(report_path)
    print(f"::error title={workflow_property('dsh-capsule gate: ' + title)}::{workflow_data(chr(10).join(lines))}")
    for line in lines:  # stderr is read for workflow commands too: each line starts "gate:"
        print(f"gate: {visible(title)} FAILED: {visible(line)}", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "error":
        error(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "warning":
        print(f"::warning title={workflow_property(sys.argv[2])}::{workflow_data(sys.argv[3])}")
    else:
        sys.exit("usage: gate_text.py error TITLE REPORT_JSON | warning TITLE MESSAGE")
