#!/usr/bin/env python3
"""make bench: what a fresh cell per call costs, measured side by side in one
run (interleaved, so drift hits every column alike). Not a test: it prints
ratios and writes build/bench.md."""
import json
import os
import re
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "pytest"))
from capsule_lab import Lab  # noqa: E402
from serve_driver import Serve  # noqa: E402

RUNS = int(os.environ.get("BENCH_RUNS", "30"))
BIN = REPO / "build" / "bin"
os.environ["CAPSULE_BIN"] = str(BIN)
ECHO = REPO / "examples" / "echo-capsule"


def frame(obj):
    body = json.dumps(obj).encode()
    return struct.pack(">I", len(body)) + body


BARE_INPUT = (frame({"type": "describe", "protocol": "dsh-capsule/0"})
              + frame({"type": "call", "tool": "capsule_echo", "input": {"text": "x"}})
              + frame({"type": "shutdown"}))
ENV = {"PATH": os.environ["PATH"]}


def timed(cmd, stdin=None, env=None):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, input=stdin, capture_output=True, env=env or ENV)
    dt = (time.perf_counter() - t0) * 1000
    if p.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed: {p.stderr.decode()[-500:]}")
    return dt, p.stdout


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def callgrind_instructions(iterations):
    p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                        str(REPO / "build" / "bench" / "host_work"), str(iterations)],
                       capture_output=True, text=True)
    return int(re.search(r"Collected : (\d+)", p.stderr).group(1))


def main():
    tmp = Path(tempfile.mkdtemp(prefix="capsule-bench-"))
    tmp.chmod(0o755)
    lab = Lab(tmp)
    config = lab.config([{"root": str(ECHO), "manifest": "capsule.json",
                          "policy": {"capsuleId": "example.echo", "tools": ["capsule_echo"],
                                     "promptSections": ["capsule.echo.guidance"], "grants": []}}])
    env = {**ENV, "TMPDIR": str(lab.stage)}
    host = str(BIN / "capsule-host")
    serve = Serve(lab, config)
    serve.initialize()
    cols = {k: [] for k in ("bare", "bare_flags", "served", "cli_call", "activate")}
    # The same Node with exactly the cell's Node flags, outside any sandbox.
    cell_flags = ["--experimental-permission", f"--allow-fs-read={ECHO / 'guest.mjs'}", "--allow-fs-read=/tmp/*",
                  "--allow-fs-write=/tmp/*", "--no-addons", "--disable-warning=ExperimentalWarning",
                  "--max-old-space-size=128"]
    phases = {k: [] for k in ("launcherMs", "bwrapSetupMs", "nodeToFirstFrameMs", "exchangeMs", "joinMs", "totalMs")}
    for i in range(RUNS):
        cols["bare"].append(timed(["node", str(ECHO / "guest.mjs")], BARE_INPUT)[0])
        cols["bare_flags"].append(timed(["node", *cell_flags, str(ECHO / "guest.mjs")], BARE_INPUT)[0])
        t0 = time.perf_counter()
        r = serve.request(1000 + i, "tools/call", {"name": "capsule_echo", "arguments": {"text": "x"}})
        cols["served"].append((time.perf_counter() - t0) * 1000)
        assert r["result"]["isError"] is False, r
        dt, out = timed([host, "call", "--config", str(config), "capsule_echo", "--input", '{"text":"x"}',
                         "--timings"], env=env)
        cols["cli_call"].append(dt)
        for k, v in json.loads(out)["timingsMs"]["call"].items():
            phases[k].append(v)
        cols["activate"].append(timed([host, "activate", "--config", str(config)], env=env)[0])
    assert serve.close() == 0

    # Served throughput at 1, 2, 4 concurrent cells (queue never overflows).
    throughput = {}
    for c in (1, 2, 4):
        cfg = lab.config([json.loads(config.read_text())["capsules"][0]], maxConcurrentCalls=c, maxQueuedCalls=32)
        s = Serve(lab, cfg)
        s.initialize()
        n, window, sent, done = 40, 2 * c, 0, 0
        t0 = time.perf_counter()
        while done < n:
            while sent < n and sent - done < window:
                sent += 1
                s.call(sent, "capsule_echo", {"text": "x"})
            m = s.recv(60)
            assert "result" in m and not m["result"]["isError"], m
            done += 1
        throughput[c] = n / (time.perf_counter() - t0)
        if c == 4:
            host_rss = int(re.search(r"VmHWM:\s+(\d+)", open(f"/proc/{s.p.pid}/status").read()).group(1))
        assert s.close() == 0

    # Peak RSS of one cell's Node, reported from inside the cell.
    _, _, hostile = lab.capsule(guest="hostile")
    hcfg = lab.config([hostile])
    _, out = timed([host, "call", "--config", str(hcfg), "hostile_probe", "--input",
                    json.dumps({"attempts": [{"attack": "max-rss"}]})], env=env)
    cell_rss = int(json.loads(out)["result"]["output"]["max-rss"]["detail"])

    subprocess.run(["make", "-s", "-C", str(REPO / "bench")], check=True)
    host_work = subprocess.run([str(REPO / "build" / "bench" / "host_work"), "2000"], capture_output=True, text=True)
    us_per_call = float(re.search(r"([\d.]+) us per call", host_work.stdout).group(1))
    try:
        instr = (callgrind_instructions(11) - callgrind_instructions(1)) // 10
    except (OSError, AttributeError):
        instr = None

    p50 = {k: statistics.median(v) for k, v in cols.items()}
    p95 = {k: pct(v, 0.95) for k, v in cols.items()}
    ph = {k: statistics.median(v) for k, v in phases.items()}
    lines = [
        f"# dsh-capsule benchmark ({RUNS} interleaved runs, {os.cpu_count()} cores, node {subprocess.check_output(['node', '--version'], text=True).strip()})",
        "",
        "| measure | p50 ms | p95 ms | ratio |",
        "|---|---:|---:|---|",
        f"| bare `node guest.mjs`, one describe + call + shutdown (floor) | {p50['bare']:.1f} | {p95['bare']:.1f} | 1.00 |",
        f"| bare node with the cell's Node flags (permission model, no addons, --max-old-space-size=128) | {p50['bare_flags']:.1f} | {p95['bare_flags']:.1f} | {p50['bare_flags'] / p50['bare']:.2f}x bare |",
        f"| sandboxed call, served (fresh cell per call) | {p50['served']:.1f} | {p95['served']:.1f} | {p50['served'] / p50['bare']:.2f}x bare (p95 {p95['served'] / p95['bare']:.2f}x); {p50['served'] / p50['bare_flags']:.2f}x flagged node |",
        f"| `capsule-host call` (activation + call, CLI) | {p50['cli_call']:.1f} | {p95['cli_call']:.1f} | {p50['cli_call'] / p50['bare']:.2f}x bare |",
        f"| activation (attest + describe) | {p50['activate']:.1f} | {p95['activate']:.1f} | {p50['activate'] / p50['served']:.2f}x one served call |",
        "",
        "Per-cell phases (host timestamps, p50 ms): "
        + ", ".join(f"{k.removesuffix('Ms')} {v:.0f}" for k, v in ph.items()),
        "",
        f"Host's own work per call (launch document, launcher parse and checks, argv, seccomp BPF, frames, "
        f"descriptor comparison, schema, result): {us_per_call / 1000:.3f} ms"
        + (f", {instr:,} instructions (callgrind)" if instr else ""),
        f"Everything but Node in a call (launcher + bwrap setup + exchange + join, p50): "
        f"{ph['launcherMs'] + ph['bwrapSetupMs'] + ph['exchangeMs'] + ph['joinMs']:.0f} ms",
        "",
        "| maxConcurrentCalls | served calls/s |",
        "|---:|---:|",
    ] + [f"| {c} | {t:.1f} |" for c, t in throughput.items()] + [
        "",
        f"Peak RSS: serving host {host_rss} KiB (VmHWM, maxConcurrentCalls 4); one cell's Node {cell_rss} KiB (maxRSS reported inside the cell)",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    (REPO / "build").mkdir(exist_ok=True)
    (REPO / "build" / "bench.md").write_text(text)


if __name__ == "__main__":
    main()
