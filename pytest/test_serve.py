"""capsule-host serve with real clients: the official MCP TypeScript SDK
client, and a 200-call load run against a served echo capsule."""
import json
import os
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
    """Installs the pinned @modelcontextprotocol/sdk from npm (needs the npm
    registry; a failure here fails the test, it never skips)."""
    if not (MCP_CLIENT / "node_modules" / "@modelcontextprotocol" / "sdk").exists():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--prefix", str(MCP_CLIENT)],
                       check=True, capture_output=True)
    return MCP_CLIENT / "client.mjs"


def test_official_mcp_sdk_client_lists_and_calls(lab, mcp_sdk):
    config = example_config(lab)
    p = subprocess.run(["node", str(mcp_sdk), str(BIN / "capsule-host"), str(config)],
                       capture_output=True, text=True, timeout=120,
                       env={"PATH": os.environ["PATH"], "TMPDIR": str(lab.stage)})
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["server"]["name"] == "dsh-capsule"
    assert [t["name"] for t in out["tools"]] == ["capsule_echo", "capsule_read"]
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
