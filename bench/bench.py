#!/usr/bin/env python3
"""make bench: what a call costs in a fresh cell, a pre-loaded warm one and
a lazy warm one (warmCellPreload 0), the CLI call and activation, against
bare Node and, where installed, the same Node under hand-written bwrap and
systemd-run --user --scope, measured side by side in one run (interleaved,
columns shuffled each round, so drift hits every column alike); then
sustained throughput at maxConcurrentCalls = the cores against bare Node at
the same concurrency, and idle memory per warm cell. Not a test: it prints
every figure as a ratio against bare Node, writes build/bench.md and
the table between the markers of docs/BENCHMARKS.md.
  BENCH_RUNS (30) rounds; BENCH_SECONDS (60) of sustained calls per side."""
import json
import os
import random
import re
import statistics
import struct
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "pytest"))
from capsule_lab import Lab  # noqa: E402
from serve_driver import Serve  # noqa: E402

RUNS = int(os.environ.get("BENCH_RUNS", "30"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "60"))
CORES = os.cpu_count() or 1
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


def busy_jiffies():
    """Machine-wide CPU time in use (user+nice+system+irq+softirq+steal),
    in clock ticks: what a side of the throughput run costs, over its calls."""
    fields = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return sum(fields) - fields[3] - fields[4]  # all but idle and iowait


def sustained_served(s, seconds, concurrency):
    """Calls kept in flight (concurrency at a time) for `seconds`: calls/s,
    latencies (ms) and machine CPU ms per call."""
    sent = done = 0
    started, lat = {}, []
    j0, t0 = busy_jiffies(), time.perf_counter()
    end = t0 + seconds
    while True:
        now = time.perf_counter()
        while now < end and sent - done < concurrency:
            sent += 1
            started[100000 + sent] = time.perf_counter()
            s.call(100000 + sent, "capsule_echo", {"text": "x"})
        if done == sent:
            break
        m = s.recv(60)
        assert "result" in m and not m["result"]["isError"], m
        lat.append((time.perf_counter() - started.pop(m["id"])) * 1000)
        done += 1
    wall = time.perf_counter() - t0
    cpu_ms = (busy_jiffies() - j0) * 1000 / os.sysconf("SC_CLK_TCK")
    return done / wall, lat, cpu_ms / done


def sustained_bare(seconds, concurrency):
    """Bare Node run once per call, concurrency at a time, for `seconds`."""
    lat, lock = [], threading.Lock()
    j0, t0 = busy_jiffies(), time.perf_counter()
    end = t0 + seconds

    def worker():
        while time.perf_counter() < end:
            dt = driven(["node", str(ECHO / "guest.mjs")])
            with lock:
                lat.append(dt)
    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    cpu_ms = (busy_jiffies() - j0) * 1000 / os.sysconf("SC_CLK_TCK")
    return len(lat) / wall, lat, cpu_ms / len(lat)


def peers():
    """The same Node under other sandboxes, where this machine has them;
    (name, argv prefix) or (name, None, why not)."""
    out = []
    bwrap = shutil.which("bwrap")
    out.append(("hand-written `bwrap` (ro /, new /dev, /proc, /tmp, every namespace unshared)",
                [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
                 "--unshare-all", "--die-with-parent", "--new-session"] if bwrap else None,
                "bwrap is not installed"))
    run = shutil.which("systemd-run")
    ok = run and subprocess.run(["systemctl", "--user", "show-environment"], capture_output=True).returncode == 0
    out.append(("`systemd-run --user --scope`", [run, "--user", "--scope", "--quiet"] if ok else None,
                "no systemd user manager here (PID 1 is "
                + open("/proc/1/comm").read().strip() + ")" if not ok else ""))
    return out


def pss_kib(pid):
    try:
        text = open(f"/proc/{pid}/smaps_rollup").read()
    except OSError:
        return 0
    return int(re.search(r"^Pss:\s+(\d+)", text, re.M).group(1))


def idle_warm_pss(lab, entry, cells=4, preload=1):
    """PSS of idle warm cells: Node, the two bwrap processes and the
    supervisor of each, summed and divided by the number of cells."""
    from capsule_lab import cell_processes
    s = serving(lab, entry, warmCellsPerCapsule=cells, warmCellPreload=preload)
    time.sleep(3)
    node = sum(pss_kib(pid) for pid, cmd in cell_processes() if cmd[0] == b"/runtime/node")
    others = sum(pss_kib(pid) for pid, cmd in cell_processes() if cmd[0] != b"/runtime/node")
    sups = [int(x) for x in open(f"/proc/{s.p.pid}/task/{s.p.pid}/children").read().split()]
    sup = sum(pss_kib(pid) for pid in sups)
    assert s.close() == 0
    return node / cells, (node + others + sup) / cells


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def write_into_benchmarks_doc(text):
    """The table between docs/BENCHMARKS.md's markers (the README links it)."""
    doc = REPO / "docs" / "BENCHMARKS.md"
    old = doc.read_text()
    head, rest = old.split("<!-- bench:begin -->", 1)
    tail = rest.split("<!-- bench:end -->", 1)[1]
    doc.write_text(f"{head}<!-- bench:begin -->\n{text}<!-- bench:end -->{tail}")


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
    warm = serving(lab, entry, warmCellsPerCapsule=1, warmCellPreload=1)
    lazy = serving(lab, entry, warmCellsPerCapsule=1, warmCellPreload=0)
    # The same Node with exactly the cell's Node flags, outside any sandbox.
    cell_flags = ["--experimental-permission", f"--allow-fs-read={ECHO / 'guest.mjs'}", "--allow-fs-read=/tmp/*",
                  "--allow-fs-write=/tmp/*", "--no-addons", "--disable-warning=ExperimentalWarning",
                  "--max-old-space-size=128"]
    phases = {k: [] for k in ("launcherMs", "bwrapSetupMs", "nodeToFirstFrameMs", "exchangeMs", "joinMs", "totalMs")}
    act_phases = {}

    def cli_call():
        dt, out = timed([host, "call", "--config", str(config), "capsule_echo", "--input", '{"text":"x"}',
                         "--timings"], env=env)
        for k, v in json.loads(out)["timingsMs"]["call"].items():
            if v is not None:  # null: a moment the cell did not report
                phases[k].append(v)
        return dt

    def activate():
        dt, out = timed([host, "activate", "--config", str(config), "--timings"], env=env)
        for k, v in json.loads(out)["timingsMs"].items():
            if isinstance(v, (int, float)):
                act_phases.setdefault(k, []).append(v)
        return dt

    def warm_call(server, base):
        def run(i):
            dt = served_call(server, base + i)
            # The replacement cell starts now: let it finish outside every
            # measurement, or it would tax whichever column runs next.
            time.sleep(0.5)
            return dt
        return run

    measures = {
        "bare": lambda i: driven(["node", str(ECHO / "guest.mjs")]),
        "bare_flags": lambda i: driven(["node", *cell_flags, str(ECHO / "guest.mjs")]),
        "cold": lambda i: served_call(cold, 1000 + i),
        "warm": warm_call(warm, 2000),
        "lazy": warm_call(lazy, 3000),
        "cli_call": lambda i: cli_call(),
        "activate": lambda i: activate(),
    }
    skipped = []
    for n, (name, prefix, why) in enumerate(peers()):
        if prefix:
            measures[f"peer{n}"] = (lambda pre: lambda i: driven([*pre, "node", str(ECHO / "guest.mjs")]))(prefix)
        else:
            skipped.append(f"{name}: not measured, {why}")
    labels = {f"peer{n}": name for n, (name, _, _) in enumerate(peers())}
    cols = {k: [] for k in measures}
    rng = random.Random(15)
    for i in range(RUNS):
        order = list(measures)
        rng.shuffle(order)  # no column always runs right after another
        for k in order:
            cols[k].append(measures[k](i))
    assert cold.close() == 0 and warm.close() == 0 and lazy.close() == 0

    # Sustained throughput: maxConcurrentCalls = the cores, pre-loaded warm
    # cells (one per concurrent call), against bare Node at that concurrency.
    s = serving(lab, entry, maxConcurrentCalls=CORES, maxQueuedCalls=64, warmCellsPerCapsule=CORES)
    time.sleep(2)  # the warm cells up
    served_rate, served_lat, served_cpu = sustained_served(s, SECONDS, CORES)
    host_rss = int(re.search(r"VmHWM:\s+(\d+)", open(f"/proc/{s.p.pid}/status").read()).group(1))
    assert s.close() == 0
    bare_rate, bare_lat, bare_cpu = sustained_bare(SECONDS, CORES)
    pss_node, pss_all = idle_warm_pss(lab, entry, preload=1)
    lazy_node, lazy_all = idle_warm_pss(lab, entry, preload=0)

    subprocess.run(["make", "-s", "-C", str(REPO / "bench")], check=True)
    host_work = subprocess.run([str(REPO / "build" / "bench" / "host_work"), "2000"], capture_output=True, text=True)
    us_per_call = float(re.search(r"([\d.]+) us per call", host_work.stdout).group(1))

    p50 = {k: statistics.median(v) for k, v in cols.items()}
    p99 = {k: pct(v, 0.99) for k, v in cols.items()}
    ph = {k: statistics.median(v) for k, v in phases.items() if v}  # a phase never reported is left out
    aph = {k: statistics.median(v) for k, v in act_phases.items()}

    def row(label, k):
        return (f"| {label} | {p50[k]:.1f} | {p99[k]:.1f} | **{p50[k] / p50['bare']:.2f}x** | "
                f"{p99[k] / p99['bare']:.2f}x |")

    lines = [
        f"Measured {time.strftime('%Y-%m-%d')}: {RUNS} rounds, columns shuffled each round, {CORES} cores, "
        f"node {subprocess.check_output(['node', '--version'], text=True).strip()}, the echo capsule. "
        "Every Node is driven frame by frame as a cell is (describe, wait, call, wait, shutdown, wait).",
        "",
        "| measure | p50 ms | p99 ms | ratio p50 | ratio p99 |",
        "|---|---:|---:|---:|---:|",
        row("bare `node guest.mjs` (the floor)", "bare"),
        row("bare node with the cell's Node flags", "bare_flags"),
        *[row(labels[k], k) for k in cols if k.startswith("peer")],
        row("served call, pre-loaded warm cell (warmCellPreload 1, the default)", "warm"),
        row("served call, lazy warm cell (warmCellPreload 0)", "lazy"),
        row("served call, fresh cell (warmCellsPerCapsule 0, startup snapshot)", "cold"),
        row("`capsule-host call` (activation + call, CLI)", "cli_call"),
        row("activation (`capsule-host activate`: attest + describe one capsule)", "activate"),
        *[f"\n{x}" for x in skipped],
        "",
        "Activation's phases (`activate --timings`, p50 ms): "
        + ", ".join(f"{k.removesuffix('Ms')} {v:.0f}" for k, v in aph.items()),
        "",
        "A fresh cell's phases (`call --timings`, p50 ms): "
        + ", ".join(f"{k.removesuffix('Ms')} {v:.0f}" for k, v in ph.items()),
        "",
        f"The host's own work per call (launch document, launcher checks, argv, seccomp BPF, frames, "
        f"descriptor comparison, schema, result): {us_per_call / 1000:.3f} ms",
        "",
        f"Sustained, {SECONDS:.0f} s per side, {CORES} calls in flight (maxConcurrentCalls {CORES}, "
        f"{CORES} pre-loaded warm cells):",
        "",
        "| side | calls/s | p50 ms | p99 ms | CPU ms per call (machine) |",
        "|---|---:|---:|---:|---:|",
        f"| bare Node, one per call | {bare_rate:.1f} | {statistics.median(bare_lat):.1f} | "
        f"{pct(bare_lat, 0.99):.1f} | {bare_cpu:.1f} |",
        f"| served, pre-loaded warm cells | {served_rate:.1f} | {statistics.median(served_lat):.1f} | "
        f"{pct(served_lat, 0.99):.1f} | {served_cpu:.1f} |",
        f"| ratio served / bare | **{served_rate / bare_rate:.2f}x** | "
        f"{statistics.median(served_lat) / statistics.median(bare_lat):.2f}x | "
        f"{pct(served_lat, 0.99) / pct(bare_lat, 0.99):.2f}x | {served_cpu / bare_cpu:.2f}x |",
        "",
        f"Idle warm cell, PSS per cell (4 cells): pre-loaded: Node {pss_node / 1024:.1f} MiB, "
        f"with its bwrap processes and supervisor {pss_all / 1024:.1f} MiB; lazy: Node {lazy_node / 1024:.1f} MiB, "
        f"all {lazy_all / 1024:.1f} MiB",
        f"Peak RSS of the serving host: {host_rss} KiB (VmHWM, maxConcurrentCalls {CORES})",
        "",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    (REPO / "build").mkdir(exist_ok=True)
    (REPO / "build" / "bench.md").write_text(text)
    write_into_benchmarks_doc(text)


if __name__ == "__main__":
    main()
