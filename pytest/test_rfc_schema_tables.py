"""RFC 13's field tables and the code's value tables say the same (issue
51): every field of the world, summary and release predicates that
host/statement/statement_schema.c holds (the rows its writers build from
and its reader checks against) is in RFC 13's table for it, and every field
the table names is a row; where the RFC spells a field's members as
{a, b, ...}, they are exactly the code's rows below it; and the fields the
RFC says are not compared are the rows `verify --config` does not compare."""
import re

from capsule_lab import REPO

SCHEMA = (REPO / "host" / "statement" / "statement_schema.c").read_text()
RFC = (REPO / "docs" / "RFC.md").read_text()


def code_table(table):
    """{path: compared} of one schema_row table of statement_schema.c."""
    body = SCHEMA.split(f"const schema_row {table}[] = {{", 1)[1].split("};", 1)[0]
    rows = re.findall(r'\{"([^"]+)", V_\w+, (?:REQUIRED|OPTIONAL), (COMPARED|OBSERVED),', body)
    assert rows, table
    return {path: compared == "COMPARED" for path, compared in rows}


def code_rows(table):
    return list(code_table(table))


def rfc_table(after):
    """{field: meaning} of the first table after the heading text `after`."""
    text = RFC.split(after, 1)[1]
    table = text[text.index("| field |"):]
    table = table[:table.index("\n\n")]
    out = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        for name in re.findall(r"`([A-Za-z0-9]+)`", cells[0]):
            out[name] = cells[1]
    return out


def members(meaning):
    """The {a, b: [{c, d}]} a table cell opens with, as its first-level names."""
    m = re.match(r"(?:not compared: )?`\{([^`]*)\}`", meaning)
    if not m:
        return None
    inner = m.group(1)
    while re.search(r"[\[{][^\[\]{}]*[\]}]", inner):  # drop nested lists and objects
        inner = re.sub(r"[\[{][^\[\]{}]*[\]}]", "", inner)
    return {part.split(":")[0].strip() for part in inner.split(",") if part.strip()}


def check(table, heading):
    rows = code_rows(table)
    top = {p for p in rows if "/" not in p}
    documented = rfc_table(heading)
    assert top == set(documented), (sorted(top ^ set(documented)), table)
    for field, meaning in documented.items():
        named = members(meaning)
        if named is None:
            continue
        children = {p.split("/")[1] for p in rows if p.startswith(field + "/") and p.count("/") == 1}
        assert named == children, (field, sorted(named ^ children))


def test_the_world_table_of_rfc_13_is_the_codes():
    check("statement_schema_world", "**The world statement**")


def test_what_the_rfc_says_is_not_compared_is_what_drift_skips():
    compared = code_table("statement_schema_world")
    documented = rfc_table("**The world statement**")
    not_compared = {f for f, meaning in documented.items() if meaning.startswith("not compared")}
    assert not_compared == {p for p, c in compared.items() if "/" not in p and not c}
    # Below a row that is not compared, nothing is.
    for path, c in compared.items():
        if "/" in path and not compared[path.split("/")[0]]:
            assert not c, path


def test_the_summary_table_of_rfc_13_is_the_codes():
    check("statement_schema_summary", "**A verification summary per capsule**")


def test_the_release_table_of_rfc_13_is_the_codes():
    check("statement_schema_release", "**The release statement**")


def test_a_field_missing_from_the_rfc_fails():
    import pytest
    global RFC
    saved = RFC
    try:
        RFC = saved.replace("| `bwrap` | `{path, sha256}` |", "| `bwrap` | `{path}` |")
        assert RFC != saved
        with pytest.raises(AssertionError):
            check("statement_schema_world", "**The world statement**")
        RFC = saved.replace("| `sourceDateEpoch` |", "| `builtAt` |")
        with pytest.raises(AssertionError):
            check("statement_schema_release", "**The release statement**")
        RFC = saved.replace("| `failure` | `{code, message}`", "| `failure` | `{code}`")
        with pytest.raises(AssertionError):
            check("statement_schema_summary", "**A verification summary per capsule**")
    finally:
        RFC = saved
