#!/usr/bin/env python3
"""make soak: one `capsule-host serve` answering SOAK_CALLS (default 10,000)
mixed calls over the echo example and hostile guests (ok, guest error,
input refused, memory bomb, CPU spin, crash, hang past its deadline,
oversized answer, cancel in the queue, cancel while running, BUSY bursts,
a client that stops reading for a while), then EOF. Not a timed test: it
samples serve every few seconds and prints, at the start and the end and
as a slope per 1,000 calls, its live and zombie children, open fds, RSS,
staging entries, descriptors held on capsule or workspace files, and log
lines against calls (C19: one per call). Exit 1 when anything grows past
noise, a call is not answered exactly once with an outcome of its kind, or
the log and the calls disagree. Writes build/soak.md."""
import collections
import os
import random
import re
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "pytest"))
os.environ.setdefault("CAPSULE_BIN", str(REPO / "build" / "bin"))
from capsule_lab import Lab  # noqa: E402
from serve_driver import Serve  # noqa: E402

CALLS = int(os.environ.get("SOAK_CALLS", "10000"))
SAMPLE_S = 3.0
FRAME_MAX = 262144


def raw(lab, name, call_actions):
    """A raw-protocol capsule publishing one tool, name, whose call runs
    call_actions (attack-corpus/guests/raw.mjs)."""
    describe = {"type": "describe.result", "promptSections": [],
                "tools": [{"name": name, "description": "soak", "inputSchema": {"type": "object"}}]}
    _, _, entry = lab.capsule(guest="raw", manifest={"id": f"soak.{name}"},
                              params={"script": {"describe": [{"send": describe}], "call": call_actions}},
                              contributes={"tools": [name], "promptSections": []})
    return entry


# kind: (weight, tool, arguments, outcomes that are its real ones)
def kinds():
    bomb = {"attempts": [{"attack": "heap-bomb", "label": "bomb"}]}
    return {
        "ok": (62, "corpus_echo", {"text": "soak"}, {"ok"}),
        "guest error": (5, "soak_error", {}, {"guest-error"}),
        "input refused": (4, "corpus_echo", {"text": 7}, {"INPUT_INVALID"}),
        "memory bomb": (3, "hostile_probe", bomb, {"CELL_RESOURCE_LIMIT", "CELL_CALL_TIMEOUT"}),
        "cpu spin": (3, "soak_spin", {}, {"CELL_CALL_TIMEOUT", "CELL_RESOURCE_LIMIT"}),
        "crash": (3, "soak_crash", {}, {"CELL_EXITED"}),
        "hang": (3, "soak_hang", {}, {"CELL_CALL_TIMEOUT"}),
        "oversized answer": (3, "soak_big", {}, {"FRAME_TOO_LARGE"}),
        "cancel queued": (4, "corpus_echo", {"text": "cancel"}, {"CALL_CANCELLED", "ok"}),
        "cancel running": (4, "soak_slow", {}, {"CALL_CANCELLED", "ok"}),
        "busy burst": (1, "corpus_echo", {"text": "burst"}, {"ok", "BUSY"}),
    }


def outcome_of(answer):
    if answer is None:
        return "no answer"
    if "error" in answer:
        return answer["error"].get("data", {}).get("code", str(answer["error"]["code"]))
    result = answer["result"]
    if not result.get("isError"):
        return "ok"
    return result.get("_meta", {}).get("dsh-capsule/error", {}).get("code", "guest-error")


class Sampler(threading.Thread):
    """Samples serve every SAMPLE_S seconds: (calls answered, metrics)."""

    def __init__(self, serve, lab, progress):
        super().__init__(daemon=True)
        self.serve, self.lab, self.progress = serve, lab, progress
        self.samples, self.stop = [], threading.Event()

    def metrics(self):
        pid = self.serve.p.pid
        status = Path(f"/proc/{pid}/status").read_text()
        rss = int(re.search(r"VmRSS:\s+(\d+)", status).group(1))
        fds = os.listdir(f"/proc/{pid}/fd")
        held = 0
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}").startswith(str(self.lab.tmp / "capsule")):
                    held += 1
            except OSError:
                pass
        kids = self.serve.children()
        log = self.serve.stderr_path.read_text().count("capsule-host: call ")
        return {"live children": sum(1 for k in kids if k[1] != "Z"),
                "zombie children": sum(1 for k in kids if k[1] == "Z"), "open fds": len(fds),
                "RSS KiB": rss, "staging entries": len(os.listdir(self.lab.stage)),
                "held capsule files": held, "log lines - calls done": log - self.progress["done"]}

    def run(self):
        while not self.stop.is_set():
            try:
                self.samples.append((self.progress["done"], self.metrics()))
            except (OSError, AttributeError):
                pass
            self.stop.wait(SAMPLE_S)


def slope(samples, key):
    """Least-squares growth per 1,000 calls, over the second half (the first
    half warms: the snapshot, the allocator's arenas)."""
    pts = [(n, m[key]) for n, m in samples if n >= samples[-1][0] / 2]
    if len(pts) < 3:
        return 0.0
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    var = sum((p[0] - mx) ** 2 for p in pts)
    return 1000 * sum((p[0] - mx) * (p[1] - my) for p in pts) / var if var else 0.0


def main():
    tmp = Path(tempfile.mkdtemp(prefix="capsule-soak-"))
    tmp.chmod(0o755)
    lab = Lab(tmp)
    _, _, echo = lab.capsule(guest="echo", manifest={"id": "soak.echo"})
    _, _, hostile = lab.capsule(guest="hostile", manifest={"id": "soak.hostile"})
    entries = [echo, hostile,
               raw(lab, "soak_error", [{"send": {"type": "call.result", "isError": True, "message": "soak"}}]),
               raw(lab, "soak_spin", [{"busy": True}]), raw(lab, "soak_crash", [{"crash": True}]),
               raw(lab, "soak_hang", [{"hang": True}]), raw(lab, "soak_big", [{"padBody": FRAME_MAX + 16}]),
               raw(lab, "soak_slow", [{"sleepMs": 400}, {"sendDefault": True}])]
    config = lab.config(entries, maxConcurrentCalls=4, maxQueuedCalls=24, callTimeoutMs=1500,
                        maxOldSpaceSizeMb=64, maxFrameBytes=FRAME_MAX, warmCellsPerCapsule=1)
    serve = Serve(lab, config)
    serve.initialize()
    table = kinds()
    names = list(table)
    weights = [table[k][0] for k in names]
    progress = {"done": 0}
    sampler = Sampler(serve, lab, progress)
    rng = random.Random(20261204)
    sent, outcomes, wrong = {}, collections.defaultdict(collections.Counter), []
    began = time.monotonic()
    sampler.start()
    rid = 0

    def settle(wanted_in_flight):
        while len([i for i in sent if i not in serve.responses and sent[i][1] != "cancelled"]) > wanted_in_flight:
            if serve.recv_or_none(30) is None:
                raise SystemExit("serve stopped answering")

    while rid < CALLS:
        kind = rng.choices(names, weights)[0]
        if kind == "busy burst":
            burst = min(40, CALLS - rid)
            for _ in range(burst):
                rid += 1
                sent[rid] = (kind, "sent")
                serve.call(rid, table[kind][1], table[kind][2])
        else:
            rid += 1
            sent[rid] = (kind, "sent")
            serve.call(rid, table[kind][1], table[kind][2])
            if kind == "cancel queued":
                serve.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}})
                sent[rid] = (kind, "cancelled")
            elif kind == "cancel running":
                time.sleep(0.1)
                serve.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}})
                sent[rid] = (kind, "cancelled")
        if rid % 1000 < 2 and rid > 1:
            time.sleep(2)  # a client that stops reading for a while
        settle(6)
        progress["done"] = len(serve.responses) - 1 + sum(1 for v in sent.values() if v[1] == "cancelled")
    settle(0)
    time.sleep(1)  # cancelled calls are logged as their cells are joined
    progress["done"] = rid
    sampler.stop.set()
    sampler.join()
    final = sampler.metrics()
    rc = serve.close(60)
    took = time.monotonic() - began
    log = serve.stderr_path.read_text()
    logged = collections.Counter(re.findall(r"capsule-host: call \S+ (\S+) in ", log))
    for i, (kind, how) in sent.items():
        got = outcome_of(serve.responses.get(i))
        if how == "cancelled" and got == "no answer":
            got = "CALL_CANCELLED"
        outcomes[kind][got] += 1
        if got not in table[kind][3]:
            wrong.append((i, kind, got))
    samples = sampler.samples  # under load; final is the idle end
    lines = [f"# make soak: {rid} calls in {took:.0f} s ({rid / took:.1f} calls/s), serve exit {rc}", "",
             "| measure | start | end | slope per 1,000 calls (second half) |", "|---|---|---|---|"]
    flat = True
    limits = {"live children": 0.5, "zombie children": 0.5, "open fds": 0.5, "RSS KiB": 512,
              # calls done counts a cancel when it is sent, its line comes
              # when its cell is joined: a few in flight either way. The
              # exact count (one line per call) is checked at the end.
              "staging entries": 0.5, "held capsule files": 0.5, "log lines - calls done": 2.0}
    for key, limit in limits.items():
        s = slope(samples, key)
        start = samples[0][1][key] if samples else final[key]
        end = final[key]
        ok = abs(s) <= limit
        flat &= ok
        lines.append(f"| {key} | {start} | {end} | {s:+.2f}{'' if ok else '  GROWS'} |")
    lines += ["", "| kind | outcomes |", "|---|---|"]
    for kind in names:
        lines.append(f"| {kind} | {', '.join(f'{k} {v}' for k, v in sorted(outcomes[kind].items()))} |")
    total_logged = sum(logged.values())
    lines += ["", f"log lines {total_logged} for {rid} calls; zombies at the end {final['zombie children']}; "
              f"staging entries at the end {final['staging entries']}"]
    if wrong:
        lines.append(f"calls with an outcome not of their kind: {wrong[:20]}")
    text = "\n".join(lines) + "\n"
    print(text)
    (REPO / "build").mkdir(exist_ok=True)
    (REPO / "build" / "soak.md").write_text(text)
    ok = flat and not wrong and total_logged == rid and rc == 0 and final["zombie children"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
