#!/usr/bin/env python3
"""make bench: what a call costs in a fresh cell and in a warm one, against
bare Node, measured side by side in one run (interleaved, columns shuffled
each round, so drift hits every column alike). Not a test: it prints
ratios, p50 and p95, and writes build/bench.md."""
import json
import os
import random
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


ENV = {"PATH": os.environ["PATH"]}
EXCHANGE = [{"type": "describe", "protocol": "dsh-capsule/0"},
            {"type": "call", "tool": "capsule_echo", "input": {"text": "x"}},
            {"type": "shutdown"}]


def read_frame(f):
    head = f.read(4)
    if len(head) < 4:
        raise SystemExit("bare node closed its output early")
    return json.loads(f.read(struct.unpack(">I", head)[0]))


def driven(cmd):
    """Spawn to exit of a Node that is driven as a cell is: one frame, wait
    for its answer, the next (describe, call, shutdown)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=ENV)
    for msg in EXCHANGE:
        p.stdin.write(frame(msg))
        p.stdin.flush()
        read_frame(p.stdout)
    p.stdin.close()
    if p.wait() != 0:
        raise SystemExit(f"{cmd} failed")
    return (time.perf_counter() - t0) * 1000


def timed(cmd, env=None):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, env=env or ENV)
    dt = (time.perf_counter() - t0) * 1000
    if p.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed: {p.stderr.decode()[-500:]}")
    return dt, p.stdout


def serving(lab, entry, **limits):
    """A serving host whose startup snapshot is in use (its log says so)."""
    s = Serve(lab, lab.config([entry], **limits))
    s.initialize()
    deadline = time.monotonic() + 30
    while "startup snapshot in use" not in s.stderr_path.read_text():
        if time.monotonic() > deadline:
            raise SystemExit(f"no startup snapshot: {s.stderr_path.read_text()[-500:]}")
        time.sleep(0.05)
    return s


def served_call(s, rid):
    t0 = time.perf_counter()
    r = s.request(rid, "tools/call", {"name": "capsule_echo", "arguments": {"text": "x"}})
    assert r["result"]["isError"] is False, r
    return (time.perf_counter() - t0) * 1000


def throughput(s, calls=40, window=2):
    sent = done = 0
    t0 = time.perf_counter()
    while done < calls:
        while sent < calls and sent - done < window:
            sent += 1
            s.call(100000 + sent, "capsule_echo", {"text": "x"})
        m = s.recv(60)
        assert "result" in m and not m["result"]["isError"], m
        done += 1
    return calls / (time.perf_counter() - t0)


def pss_kib(pid):
    try:
        text = open(f"/proc/{pid}/smaps_rollup").read()
    except OSError:
        return 0
    return int(re.search(r"^Pss:\s+(\d+)", text, re.M).group(1))


def idle_warm_pss(lab, entry, cells=4):
    """PSS of idle warm cells: Node, the two bwrap processes and the
    supervisor of each, summed and divided by the number of cells."""
    from capsule_lab import cell_processes
    s = serving(lab, entry, warmCellsPerCapsule=cells)
    time.sleep(2)
    node = sum(pss_kib(pid) for pid, cmd in cell_processes() if cmd[0] == b"/runtime/node")
    others = sum(pss_kib(pid) for pid, cmd in cell_processes() if cmd[0] != b"/runtime/node")
    sups = [int(x) for x in open(f"/proc/{s.p.pid}/task/{s.p.pid}/children").read().split()]
    sup = sum(pss_kib(pid) for pid in sups)
    assert s.close() == 0
    return node / cells, (node + others + sup) / cells


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def main():
    tmp = Path(tempfile.mkdtemp(prefix="capsule-bench-"))
    tmp.chmod(0o755)
    lab = Lab(tmp)
    entry = {"root": str(ECHO), "manifest": "capsule.json",
             "policy": {"capsuleId": "example.echo", "tools": ["capsule_echo"],
                        "promptSections": ["capsule.echo.guidance"], "grants": []}}
    config = lab.config([entry])
    env = {**ENV, "TMPDIR": str(lab.stage)}
    host = str(BIN / "capsule-host")
    cold = serving(lab, entry, warmCellsPerCapsule=0)
    warm = serving(lab, entry, warmCellsPerCapsule=1)
    # The same Node with exactly the cell's Node flags, outside any sandbox.
    cell_flags = ["--experimental-permission", f"--allow-fs-read={ECHO / 'guest.mjs'}", "--allow-fs-read=/tmp/*",
                  "--allow-fs-write=/tmp/*", "--no-addons", "--disable-warning=ExperimentalWarning",
                  "--max-old-space-size=128"]
    phases = {k: [] for k in ("launcherMs", "bwrapSetupMs", "nodeToFirstFrameMs", "exchangeMs", "joinMs", "totalMs")}

    def cli_call():
        dt, out = timed([host, "call", "--config", str(config), "capsule_echo", "--input", '{"text":"x"}',
                         "--timings"], env=env)
        for k, v in json.loads(out)["timingsMs"]["call"].items():
            if v is not None:  # null: a moment the cell did not report
                phases[k].append(v)
        return dt

    def warm_call(i):
        dt = served_call(warm, 2000 + i)
        # The replacement cell starts now: let it finish outside every
        # measurement, or it would tax whichever column runs next.
        time.sleep(0.5)
        return dt

    measures = {
        "bare": lambda i: driven(["node", str(ECHO / "guest.mjs")]),
        "bare_flags": lambda i: driven(["node", *cell_flags, str(ECHO / "guest.mjs")]),
        "cold": lambda i: served_call(cold, 1000 + i),
        "warm": warm_call,
        "cli_call": lambda i: cli_call(),
        "activate": lambda i: timed([host, "activate", "--config", str(config)], env=env)[0],
    }
    cols = {k: [] for k in measures}
    rng = random.Random(15)
    for i in range(RUNS):
        order = list(measures)
        rng.shuffle(order)  # no column always runs right after another
        for k in order:
            cols[k].append(measures[k](i))
    assert cold.close() == 0 and warm.close() == 0

    # Served throughput at 1, 2, 4 concurrent cells, fresh and warm.
    rates = {}
    for mode, warm_cells in (("cold", 0), ("warm", 1)):
        for c in (1, 2, 4):
            s = serving(lab, entry, maxConcurrentCalls=c, maxQueuedCalls=32, warmCellsPerCapsule=warm_cells)
            rates[(mode, c)] = throughput(s, window=2 * c)
            if mode == "cold" and c == 4:
                host_rss = int(re.search(r"VmHWM:\s+(\d+)", open(f"/proc/{s.p.pid}/status").read()).group(1))
            assert s.close() == 0
    pss_node, pss_all = idle_warm_pss(lab, entry)

    subprocess.run(["make", "-s", "-C", str(REPO / "bench")], check=True)
    host_work = subprocess.run([str(REPO / "build" / "bench" / "host_work"), "2000"], capture_output=True, text=True)
    us_per_call = float(re.search(r"([\d.]+) us per call", host_work.stdout).group(1))

    p50 = {k: statistics.median(v) for k, v in cols.items()}
    p95 = {k: pct(v, 0.95) for k, v in cols.items()}
    ph = {k: statistics.median(v) for k, v in phases.items() if v}  # a phase never reported is left out

    def row(label, k):
        return (f"| {label} | {p50[k]:.1f} | {p95[k]:.1f} | {p50[k] / p50['bare']:.2f} | "
                f"{p95[k] / p95['bare']:.2f} |")

    lines = [
        f"# dsh-capsule benchmark ({RUNS} rounds, columns shuffled each round, {os.cpu_count()} cores, "
        f"node {subprocess.check_output(['node', '--version'], text=True).strip()})",
        "",
        "Every Node below is driven frame by frame as a cell is (describe, wait, call, wait, shutdown, wait).",
        "",
        "| measure | p50 ms | p95 ms | ratio p50 | ratio p95 |",
        "|---|---:|---:|---:|---:|",
        row("bare `node guest.mjs` (floor)", "bare"),
        row("bare node with the cell's Node flags (permission model, no addons, --max-old-space-size=128)", "bare_flags"),
        row("served call, fresh cell (startup snapshot, warmCellsPerCapsule 0)", "cold"),
        row("served call, warm cell (warmCellsPerCapsule 1)", "warm"),
        row("`capsule-host call` (activation + call, CLI, no snapshot)", "cli_call"),
        row("activation (`capsule-host activate`: attest + describe of one capsule)", "activate"),
        "",
        "Per fresh-cell phases of `capsule-host call` (host timestamps, p50 ms): "
        + ", ".join(f"{k.removesuffix('Ms')} {v:.0f}" for k, v in ph.items()),
        "",
        f"Host's own work per call (launch document, launcher parse and checks, argv, seccomp BPF, frames, "
        f"descriptor comparison, schema, result): {us_per_call / 1000:.3f} ms",
        "",
        "| maxConcurrentCalls | fresh cells, calls/s | warm cells, calls/s |",
        "|---:|---:|---:|",
    ] + [f"| {c} | {rates[('cold', c)]:.1f} | {rates[('warm', c)]:.1f} |" for c in (1, 2, 4)] + [
        "",
        f"Idle warm cell, PSS (4 warm cells, per cell): Node {pss_node / 1024:.1f} MiB; "
        f"with its bwrap processes and supervisor {pss_all / 1024:.1f} MiB",
        f"Peak RSS of the serving host: {host_rss} KiB (VmHWM, maxConcurrentCalls 4)",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    (REPO / "build").mkdir(exist_ok=True)
    (REPO / "build" / "bench.md").write_text(text)


if __name__ == "__main__":
    main()
