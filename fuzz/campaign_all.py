#!/usr/bin/env python3
"""make -C fuzz campaign-all BUDGET=1h [JOBS=N]: an AFL++ campaign over every
harness, then its report and the kept corpus.

  run     every harness in turn, JOBS at a time (default: the cores), each
          for BUDGET / harnesses seconds (BUDGET is fuzzing time summed over
          the harnesses: 1h on one core takes an hour, on two half of it).
          Each starts from its generated seeds and the kept corpus
          (fuzz/corpus/<harness>), with its dictionary, one afl-fuzz -M with
          the CMPLOG build (-c), ASan+UBSan. Output: build/fuzz/campaign/.
  report  per harness: execs, execs/s, corpus size, edges, crashes, hangs
          and the time of the last new path (fuzzer_stats), line and branch
          coverage of its target files (coverage.py's TARGETS) from its
          queue through the clang coverage build, an HTML coverage report
          (build/fuzz/campaign/html/<harness>/index.html), and plots of
          paths and edges over time (plot_data, drawn as SVG). Writes
          build/fuzz/campaign/report.md and the SVGs beside it.
  keep    each queue, with the kept corpus, minimised by afl-cmin into
          fuzz/corpus/<harness>, held under the cap below: the next campaign,
          the smoke run, coverage and ClusterFuzzLite start where this ended.

`campaign_all.py all` runs the three in order. Crashes and hangs are listed
with their files; triage makes each a regression input (fuzz/regressions/)
and a fix."""
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from coverage import OUT as FUZZ_OUT, ROOT, TARGETS, line_coverage  # noqa: E402

FUZZ = ROOT / "fuzz"
OUT = FUZZ_OUT / "campaign"
# The kept corpus's cap per harness: small enough to commit, large enough
# for what a campaign finds (the largest today holds 256 KB in 331 files).
CAP_BYTES = 1024 * 1024
CAP_FILES = 1500


def harnesses():
    return sorted(p.stem[len("fuzz_"):] for p in (FUZZ / "harness").glob("fuzz_*.c"))


def budget_seconds(text):
    m = re.fullmatch(r"(\d+)([smh]?)", text.strip())
    if not m:
        sys.exit(f"BUDGET={text!r}: a number of seconds, or with s, m or h (1h, 90m)")
    return int(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]


def max_len(harness):
    options = FUZZ / "options" / f"{harness}.options"
    m = re.search(r"max_len = (\d+)", options.read_text()) if options.exists() else None
    return int(m.group(1)) if m else None


def inputs(harness, into):
    """Seeds and the kept corpus, each distinct input once."""
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    seen, limit = set(), max_len(harness) or 1024 * 1024
    for d in (FUZZ / "seeds" / harness, FUZZ / "corpus" / harness):
        for p in sorted(d.iterdir()) if d.is_dir() else []:
            data = p.read_bytes()
            digest = hashlib.sha256(data).hexdigest()
            if p.is_file() and data and len(data) <= limit and digest not in seen:
                seen.add(digest)
                (into / digest[:16]).write_bytes(data)
    return len(seen)


def fuzz_one(harness, seconds):
    work = OUT / harness
    shutil.rmtree(work / "out", ignore_errors=True)
    count = inputs(harness, work / "in")
    ml = max_len(harness)
    env = {**os.environ, "AFL_NO_UI": "1", "AFL_SKIP_CPUFREQ": "1", "AFL_NO_AFFINITY": "1",
           "AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES": "1", "AFL_CMPLOG_ONLY_NEW": "1"}
    args = ["afl-fuzz", "-M", "main", "-c", str(FUZZ_OUT / "afl-cmplog" / f"fuzz_{harness}"),
            "-i", str(work / "in"), "-o", str(work / "out"), "-x", str(FUZZ / "dict" / f"{harness}.dict"),
            "-m", "none", "-t", "1000", "-V", str(seconds), *(["-G", str(ml)] if ml else []),
            "--", str(FUZZ_OUT / "afl" / f"fuzz_{harness}")]
    start = time.monotonic()
    with open(work / "afl.log", "wb") as log:
        rc = subprocess.run(args, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
    print(f"fuzz_{harness}: {time.monotonic() - start:.0f} s, afl-fuzz exit {rc}, {count} inputs in",
          flush=True)
    (work / "run.json").write_text(json.dumps({"seconds": seconds, "exit": rc, "inputs": count}))


def run(budget, jobs):
    names = harnesses()
    each = max(30, budget // len(names))
    print(f"campaign: {len(names)} harnesses x {each} s, {jobs} at a time "
          f"(about {each * len(names) / jobs / 60:.0f} min)", flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "campaign.json").write_text(json.dumps({"budget": budget, "jobs": jobs, "each": each,
                                                   "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}))
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(lambda h: fuzz_one(h, each), names))


def stats(harness):
    f = OUT / harness / "out" / "main" / "fuzzer_stats"
    if not f.exists():
        return {}
    return dict(line.split(":", 1) for line in (l.replace(" ", "") for l in f.read_text().splitlines()) if ":" in line)


def plot_series(harness):
    """(seconds, corpus_count, edges_found) rows from plot_data."""
    f = OUT / harness / "out" / "main" / "plot_data"
    rows = []
    for line in f.read_text().splitlines() if f.exists() else []:
        if line.startswith("#"):
            continue
        cols = [c.strip() for c in line.split(",")]
        if len(cols) >= 13:
            rows.append((int(cols[0]), int(cols[3]), int(cols[12])))
    return rows


def svg(series, title):
    """Small multiples: per harness, paths (corpus entries) and edges over
    time, each on its own scale from zero."""
    cols, w, h, pad = 4, 240, 150, 28
    names = sorted(series)
    rows = (len(names) + cols - 1) // cols
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{cols * w}" height="{rows * h + 40}" '
           f'font-family="sans-serif" font-size="11">',
           f'<text x="8" y="18" font-size="14">{title}</text>',
           f'<text x="8" y="34" fill="#1f77b4">paths (corpus entries)</text>'
           f'<text x="160" y="34" fill="#d62728">edges found</text>'
           f'<text x="280" y="34">each from its first to its last value; time from the start</text>']
    for i, name in enumerate(names):
        x0, y0 = (i % cols) * w, 40 + (i // cols) * h
        data = series[name]
        out.append(f'<text x="{x0 + pad}" y="{y0 + 14}">{name}</text>')
        out.append(f'<rect x="{x0 + pad}" y="{y0 + 20}" width="{w - pad - 10}" height="{h - 50}" '
                   f'fill="none" stroke="#ccc"/>')
        if not data:
            continue
        t_max = max(r[0] for r in data) or 1
        for col, colour in ((1, "#1f77b4"), (2, "#d62728")):
            # Each series from its first to its last value: the growth shows.
            v_min, v_max = min(r[col] for r in data), max(r[col] for r in data)
            span = (v_max - v_min) or 1
            pts = " ".join(f"{x0 + pad + (w - pad - 10) * r[0] / t_max:.1f},"
                           f"{y0 + 22 + (h - 54) * (1 - (r[col] - v_min) / span):.1f}" for r in data)
            out.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
            out.append(f'<text x="{x0 + w - 12}" y="{y0 + h - (44 if col == 1 else 32)}" text-anchor="end" '
                       f'fill="{colour}">{v_min} to {v_max}</text>')
        out.append(f'<text x="{x0 + w - 12}" y="{y0 + h - 18}" text-anchor="end">{t_max} s</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def branch_coverage(harness, profile):
    """Covered/total branches per whole target file (llvm-cov export)."""
    binary = FUZZ_OUT / "cov" / f"fuzz_{harness}"
    out = {}
    for target in TARGETS.get(harness, []):
        path = target.partition(":")[0]
        report = subprocess.run(["llvm-cov", "export", "-summary-only", str(binary),
                                 f"-instr-profile={profile}", str(ROOT / path)],
                                capture_output=True, text=True).stdout
        try:
            b = json.loads(report)["data"][0]["files"][0]["summary"]["branches"]
            out[path] = (b["covered"], b["count"])
        except (ValueError, KeyError, IndexError):
            out[path] = (0, 0)
    return out


def html_report(harness, work):
    binary = FUZZ_OUT / "cov" / f"fuzz_{harness}"
    files = [str(ROOT / t.partition(":")[0]) for t in TARGETS.get(harness, [])]
    subprocess.run(["llvm-cov", "show", "-format=html", str(binary), f"-instr-profile={work / 'merged.profdata'}",
                    f"-output-dir={OUT / 'html' / harness}", *dict.fromkeys(files)], capture_output=True)


def target_label(target):
    path, _, functions = target.partition(":")
    return f"`{path}`" + (f" ({len(functions.split(','))} functions)" if functions else "")


def pct(pair):
    return f"{100 * pair[0] / pair[1]:.1f}%" if pair[1] else "n/a"


def report():
    meta = json.loads((OUT / "campaign.json").read_text())
    rows, series, findings = [], {}, []
    totals = {"execs": 0, "crashes": 0, "hangs": 0, "seconds": 0}
    for h in harnesses():
        s = stats(h)
        if not s:
            rows.append(f"| {h} | did not run | | | | | | | | |")
            continue
        queue = OUT / h / "out" / "main" / "queue"
        work = OUT / h / "cov"
        lines = line_coverage(h, queue, work) if h in TARGETS else {}
        branches = branch_coverage(h, work / "merged.profdata") if h in TARGETS else {}
        html_report(h, work)
        series[h] = plot_series(h)
        start, last = int(s.get("start_time", 0)), int(s.get("last_find", 0))
        execs, crashes, hangs = int(s.get("execs_done", 0)), int(s.get("saved_crashes", 0)), int(s.get("saved_hangs", 0))
        totals["execs"] += execs
        totals["crashes"] += crashes
        totals["hangs"] += hangs
        totals["seconds"] += int(s.get("run_time", 0))
        files = "<br>".join(f"{target_label(t)}: {pct(lines.get(t, (0, 0)))} lines, "
                            f"{pct(branches.get(t.partition(':')[0], (0, 0)))} branches of the file"
                            for t in TARGETS.get(h, []))
        rows.append(f"| {h} | {int(s.get('run_time', 0))} | {execs:,} | {float(s.get('execs_per_sec', 0)):,.0f} | "
                    f"{s.get('corpus_count', '?')} | {s.get('edges_found', '?')} | {crashes} | {hangs} | "
                    f"{last - start if last else 0} | {files} |")
        for kind in ("crashes", "hangs"):
            for p in sorted((OUT / h / "out" / "main" / kind).glob("id*")):
                findings.append(f"- {h} {kind[:-1] if kind == 'hangs' else 'crash'}: `{p.relative_to(ROOT)}`")
    (OUT / "progress.svg").write_text(svg(series, f"AFL++ campaign: {meta['each']} s per harness"))
    text = "\n".join([
        f"# Fuzzing campaign, started {meta['started']}", "",
        f"{len(harnesses())} harnesses x {meta['each']} s, {meta['jobs']} at a time; "
        f"{totals['seconds'] / 3600:.2f} h of fuzzing, {totals['execs']:,} executions, "
        f"{totals['crashes']} crashes, {totals['hangs']} hangs.", "",
        "| harness | seconds | execs | execs/s | corpus | edges | crashes | hangs | last new path (s) | target files: coverage of its queue |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|", *rows, "",
        "Findings:" if findings else "Findings: none.", *findings]) + "\n"
    (OUT / "report.md").write_text(text)
    print(text)


def corpus_size(d):
    files = [p for p in d.iterdir() if p.is_file()] if d.is_dir() else []
    return len(files), sum(p.stat().st_size for p in files)


def keep():
    for h in harnesses():
        queue = OUT / h / "out" / "main" / "queue"
        if not queue.is_dir():
            continue
        pool = OUT / h / "keep-in"
        shutil.rmtree(pool, ignore_errors=True)
        pool.mkdir(parents=True)
        kept = FUZZ / "corpus" / h
        for d in (kept, queue):
            for p in d.iterdir() if d.is_dir() else []:
                if p.is_file():
                    data = p.read_bytes()
                    (pool / hashlib.sha256(data).hexdigest()[:16]).write_bytes(data)
        minimised = OUT / h / "keep-out"
        shutil.rmtree(minimised, ignore_errors=True)
        p = subprocess.run(["afl-cmin", "-i", str(pool), "-o", str(minimised), "-m", "none", "-t", "5000",
                            "--", str(FUZZ_OUT / "afl" / f"fuzz_{h}")],
                           capture_output=True, text=True, env={**os.environ, "AFL_QUIET": "1"})
        if p.returncode != 0 or not minimised.is_dir():
            print(f"{h}: afl-cmin failed, kept corpus left as it was\n{p.stdout[-800:]}{p.stderr[-800:]}")
            continue
        # Under the cap: the smallest inputs first (the most coverage per byte).
        chosen, total = [], 0
        for f in sorted(minimised.iterdir(), key=lambda f: (f.stat().st_size, f.name)):
            if len(chosen) < CAP_FILES and total + f.stat().st_size <= CAP_BYTES:
                chosen.append(f)
                total += f.stat().st_size
        before = corpus_size(kept)
        shutil.rmtree(kept, ignore_errors=True)
        kept.mkdir(parents=True)
        for f in chosen:
            data = f.read_bytes()
            (kept / hashlib.sha1(data).hexdigest()).write_bytes(data)  # libFuzzer's naming
        after = corpus_size(kept)
        print(f"{h}: kept corpus {before[0]} files, {before[1]:,} B -> {after[0]} files, {after[1]:,} B")


def main():
    step = sys.argv[1] if len(sys.argv) > 1 else "all"
    budget = budget_seconds(os.environ.get("BUDGET", "1h"))
    jobs = int(os.environ.get("JOBS") or os.cpu_count() or 1)
    if step in ("run", "all"):
        run(budget, jobs)
    if step in ("report", "all"):
        report()
    if step in ("keep", "all"):
        keep()


if __name__ == "__main__":
    main()
