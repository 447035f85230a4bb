"""capsule-host serve with real clients: the official MCP TypeScript SDK
client, and a 200-call load run against a served echo capsule."""
import json
import os
import re
import statistics
import subprocess
import time

import pytest

from capsule_lab import BIN, REPO, cell_processes
from serve_driver import Serve
from test_end_to_end import example_config

MCP_CLIENT = REPO / "pytest" / "mcp-client"


@pytest.fixture(scope="session")
def mcp_sdk():
    """Installs the pinned MCP peers from npm: SDK v1 (@modelcontextprotocol/sdk),
    SDK v2 (@modelcontextprotocol/client), the conformance suite and the
    Node 24 it needs (needs the npm registry; a failure here fails the test,
    it never skips)."""
    modules = MCP_CLIENT / "node_modules"
    wanted = [modules / "@modelcontextprotocol" / p for p in ("sdk", "client", "conformance")]
    if not all(p.exists() for p in wanted + [modules / ".bin" / "node"]):
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--prefix", str(MCP_CLIENT)],
                       check=True, capture_output=True)
    return MCP_CLIENT / "client.mjs"


def sdk_v2_config(lab):
    """corpus_echo (with corpus.guidance) and corpus_raw, whose call takes 800 ms."""
    _, _, echo = lab.capsule(guest="echo")
    _, _, slow = lab.capsule(guest="raw", params={"script": {"call": [{"sleepMs": 800}, {"sendDefault": True}]}})
    return lab.config([echo, slow])


@pytest.mark.parametrize("mode,era,version", [("auto", "modern", "2026-07-28"),
                                              ("legacy", "legacy", "2025-11-25")])
def test_official_mcp_sdk_v2_client(lab, mcp_sdk, mode, era, version):
    """SDK v2 (2.4.0): auto negotiates 2026-07-28 through server/discover;
    legacy does the 2025 handshake. Both list, call, read prompts, get
    progress and cancel against the same binary."""
    p = subprocess.run(["node", str(MCP_CLIENT / "client-v2.mjs"), str(BIN / "capsule-host"),
                        str(sdk_v2_config(lab)), mode],
                       capture_output=True, text=True, timeout=120,
                       env={"PATH": os.environ["PATH"], "TMPDIR": str(lab.stage)})
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert (out["era"], out["version"]) == (era, version)
    assert out["server"]["name"] == "dsh-capsule"
    assert "corpus.guidance" in out["instructions"]
    assert out["tools"] == ["corpus_echo", "corpus_raw"]
    assert out["echo"]["isError"] is False and out["echo"]["structuredContent"] == {"text": "via SDK v2"}
    assert out["badInput"]["isError"] is True
    assert out["badInput"]["_meta"]["dsh-capsule/error"]["code"] == "INPUT_INVALID"
    assert out["prompts"] == ["corpus.guidance"]
    assert out["prompt"]["messages"][0]["content"]["type"] == "text"
    assert out["slow"]["isError"] is False
    # The server sends "cell started", then "cell finished" just before the
    # result (test_mcp_protocol.py checks the order on the wire); the SDK
    # resolves the call on the result and may drop a notification of the
    # same read, so only the first is certain here.
    seen = [(e["progress"], e["total"], e["message"]) for e in out["progress"]]
    assert seen and seen == [(1, 2, "cell started"), (2, 2, "cell finished")][:len(seen)], seen
    assert "test cancels" in out["cancelled"] or "abort" in out["cancelled"].lower(), out["cancelled"]
    assert out["afterCancel"] == 2
    assert "Unknown tool" in out["unknownTool"]
    assert "every cell joined" in p.stderr
    assert os.listdir(lab.stage) == [] and cell_processes() == []


CONFORMANCE_BASELINE = MCP_CLIENT / "conformance-expected-failures.yml"


def test_conformance_baseline_gives_every_expected_failure_a_reason():
    entries = [line for line in CONFORMANCE_BASELINE.read_text().splitlines() if line.startswith("  - ")]
    assert entries
    for line in entries:
        assert re.match(r"  - [a-z0-9-]+ +# \S.{10,}", line), f"no reason given: {line!r}"


@pytest.mark.parametrize("revision", ["2025-06-18", "2025-11-25"])
def test_official_conformance_suite(lab, mcp_sdk, revision):
    """The official suite (HTTP-only, 2025 revisions: it has no 2026-07-28
    scenarios yet) through pytest/mcp-client/http-bridge.mjs; the checked-in
    baseline lists the scenarios expected to fail, each with its reason.
    The suite itself fails on an unexpected failure or a stale entry."""
    bridge = subprocess.Popen(["node", str(MCP_CLIENT / "http-bridge.mjs"), str(BIN / "capsule-host"),
                               str(sdk_v2_config(lab))], stdout=subprocess.PIPE, text=True,
                              env={"PATH": os.environ["PATH"], "TMPDIR": str(lab.stage)})
    try:
        url = bridge.stdout.readline().split()[1]
        node24 = MCP_CLIENT / "node_modules" / ".bin" / "node"
        suite = MCP_CLIENT / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
        p = subprocess.run([str(node24), str(suite), "server", "--url", url, "--spec-version", revision,
                            "--expected-failures", str(CONFORMANCE_BASELINE),
                            "--output-dir", str(lab.tmp / "conformance")],
                           capture_output=True, text=True, timeout=600, cwd=lab.tmp)
    finally:
        bridge.terminate()
        bridge.wait(30)
    summary = [line for line in p.stdout.splitlines() if line.startswith("Total:")]
    print(f"conformance {revision}: " + " | ".join(summary))
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]
    assert cell_processes() == []


def test_official_mcp_sdk_client_lists_and_calls(lab, mcp_sdk):
    """SDK v1 (1.32.2, what DSH's MCP client row is built on): the 2025
    handshake, list, call, prompts, progress and cancel."""
    config = example_config(lab)
    _, _, slow = lab.capsule(guest="raw", params={"script": {"call": [{"sleepMs": 800}, {"sendDefault": True}]}})
    doc = json.loads(config.read_text())
    doc["capsules"].append(slow)
    config.write_text(json.dumps(doc))
    p = subprocess.run(["node", str(mcp_sdk), str(BIN / "capsule-host"), str(config)],
                       capture_output=True, text=True, timeout=120,
                       env={"PATH": os.environ["PATH"], "TMPDIR": str(lab.stage)})
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["server"]["name"] == "dsh-capsule"
    assert [t["name"] for t in out["tools"]] == ["capsule_echo", "capsule_read", "corpus_raw"]
    assert out["slow"]["isError"] is False
    seen = [(e["progress"], e["total"], e["message"]) for e in out["progress"]]
    assert seen and seen == [(1, 2, "cell started"), (2, 2, "cell finished")][:len(seen)], seen
    assert "test cancels" in out["cancelled"] or "abort" in out["cancelled"].lower(), out["cancelled"]
    assert out["afterCancel"] == 3
    assert out["echo"]["isError"] is False
    assert out["echo"]["structuredContent"] == {"text": "via the MCP SDK"}
    assert json.loads(out["echo"]["content"][0]["text"]) == {"text": "via the MCP SDK"}
    assert out["read"]["structuredContent"]["text"].startswith("Reference context")
    assert out["badInput"]["isError"] is True
    assert out["badInput"]["_meta"]["dsh-capsule/error"]["code"] == "INPUT_INVALID"
    assert [p["name"] for p in out["prompts"]] == ["capsule.echo.guidance"]
    assert "capsule_echo" in out["prompt"]["messages"][0]["content"]["text"]
    assert "capsule.echo.guidance" in out["instructions"]
    assert "Unknown tool" in out["unknownTool"]
    assert "every cell joined" in p.stderr
    assert os.listdir(lab.stage) == [] and cell_processes() == []


def test_serve_refuses_to_start_on_failed_activation(lab):
    _, _, entry = lab.capsule(guest="echo", integrity="0" * 64)
    config = lab.config([entry])
    res = lab.run("serve", "--config", config)
    assert res.code == "INTEGRITY_MISMATCH", res
    assert res.rc == 1
    assert lab.leftovers() == [] and cell_processes() == []


def test_protocol_errors_are_answered_not_fatal(lab):
    _, _, entry = lab.capsule(guest="echo")
    s = Serve(lab, lab.config([entry]))
    assert s.request(1, "tools/list")["error"]["code"] == -32600  # no version, no handshake
    s.initialize()
    s.send({"jsonrpc": "2.0", "id": 5, "method": "no/such"})
    s.p.stdin.write(b"{not json\n")
    s.p.stdin.flush()
    s.send({"jsonrpc": "1.0", "id": 6, "method": "ping"})
    assert s.request(7, "ping")["result"] == {}
    assert s.responses[5]["error"]["code"] == -32601
    assert s.responses[6]["error"]["code"] == -32600
    assert s.close() == 0


def test_load_200_calls_16_in_flight(lab):
    """200 calls, 16 outstanding at a time, 4 cells at most, 8 queued: every
    call either succeeds or is refused BUSY, none lost, none duplicated, no
    cell left, host memory flat."""
    _, _, entry = lab.capsule(guest="echo")
    config = lab.config([entry], maxConcurrentCalls=4, maxQueuedCalls=12)
    # ASan's quarantine would look like growth: measure the allocator, not it.
    s = Serve(lab, config, extra_env={"ASAN_OPTIONS": "quarantine_size_mb=0"})
    s.initialize()
    total, window = 200, 16
    sent_at, latency, next_id, rss = {}, {}, 1, {}
    pause_until = 0.0  # a client backs off briefly after BUSY
    t0 = time.monotonic()
    while len(latency) < total:
        while (next_id <= total and len(sent_at) - len(latency) < window
               and time.monotonic() >= pause_until):
            sent_at[next_id] = time.monotonic()
            s.call(next_id, "corpus_echo", {"text": f"call {next_id}"})
            next_id += 1
        waiting = pause_until - time.monotonic()
        msg = s.recv_or_none(waiting if waiting > 0 else 60)
        if msg is None:
            continue
        latency[msg["id"]] = time.monotonic() - sent_at[msg["id"]]
        if "error" in msg:
            pause_until = time.monotonic() + 0.025
        if len(latency) in (50, total):
            rss[len(latency)] = s.rss_kib()
    wall = time.monotonic() - t0
    assert s.close() == 0
    ok = [i for i, m in s.responses.items() if i and "result" in m and not m["result"]["isError"]]
    busy = [i for i, m in s.responses.items() if i and "error" in m and m["error"]["data"]["code"] == "BUSY"]
    assert sorted(ok + busy) == list(range(1, total + 1)), "every call answered exactly once"
    for i in ok:
        assert s.responses[i]["result"]["structuredContent"] == {"text": f"call {i}"}
    okl = sorted(latency[i] * 1000 for i in ok)
    report = (f"load: {total} calls, window {window}: {len(ok)} ok, {len(busy)} busy, "
              f"{len(ok) / wall:.1f} ok calls/s, p50 {statistics.median(okl):.0f} ms, "
              f"p95 {okl[int(len(okl) * 0.95) - 1]:.0f} ms, RSS {rss[50]} -> {rss[total]} KiB")
    print(report)
    (REPO / "build").mkdir(exist_ok=True)
    (REPO / "build" / "serve-load.txt").write_text(report + "\n")
    assert len(ok) >= 150, report
    assert rss[total] - rss[50] < 4096, report
    assert lab.leftovers() == [] and cell_processes() == []


def wait_for_log(s, needle, timeout=30):
    deadline = time.monotonic() + timeout
    while needle not in s.stderr_path.read_text():
        assert time.monotonic() < deadline, s.stderr_path.read_text()
        time.sleep(0.05)


def test_startup_snapshot_is_built_verified_and_used(lab):
    """serve builds the snapshot after activation, adopts it only after a
    probed cell ran from it, and every cell started afterwards mounts it
    read-only and runs from it; one-shot commands say they built none."""
    _, _, echo = lab.capsule(guest="echo")
    config = lab.config([echo], warmCellsPerCapsule=1)
    res = lab.run("activate", "--config", config)
    assert res.json["attestation"]["startupSnapshot"]["state"] == "not built", res
    s = Serve(lab, config)
    s.initialize()
    wait_for_log(s, "startup snapshot in use")
    staged = [p for d in lab.stage.iterdir() if d.is_dir() for p in d.glob("snapshot.*")]
    assert [p.name for p in staged] == ["snapshot.blob"] and (staged[0].stat().st_mode & 0o777) == 0o400
    # The warm cell that started before the snapshot takes this call; its
    # replacement starts from the snapshot.
    assert s.request(2, "tools/call", {"name": "corpus_echo", "arguments": {"text": "a"}})["result"]["isError"] is False
    deadline = time.monotonic() + 10
    while not any(b"--snapshot-blob" in cmd for _, c in cell_processes() for cmd in [b" ".join(c)]):
        assert time.monotonic() < deadline, cell_processes()
        time.sleep(0.05)
    assert s.request(3, "tools/call", {"name": "corpus_echo", "arguments": {"text": "b"}})["result"]["isError"] is False
    assert s.close() == 0
    assert "(warm cell)" in s.stderr_path.read_text()
    assert lab.leftovers() == [] and cell_processes() == []
