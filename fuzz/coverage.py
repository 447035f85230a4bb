#!/usr/bin/env python3
"""make -C fuzz coverage: for every harness, line coverage of the files it
targets before (its seeds and the kept corpus) and after a libFuzzer run of
COVERAGE_SECONDS from them, and that run's execs/s. Coverage comes from a
separate build (clang source-based coverage, the replay driver) fed every
corpus file; two harnesses run at a time. Writes build/fuzz/coverage.md;
what the runs found is left in build/fuzz/corpus/<harness> for
`make -C fuzz corpus`."""
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

FUZZ = Path(__file__).resolve().parent
ROOT = FUZZ.parent
OUT = ROOT / "build" / "fuzz"
SECONDS = int(os.environ.get("COVERAGE_SECONDS", "180"))

# What each harness exists to cover (its parser and what it checks): a whole
# file, or "file:f1,f2" for the functions it drives in a file that also
# holds code no harness can reach (the serve loop, cell I/O, file scans).
TARGETS = {
    "frame": ["common/frame.c:frame_buffer_free,read_be32,frame_buffer_append,frame_next"],
    "guest_messages": ["host/admit/describe.c", "host/admit/call_result.c"],
    "manifest": ["host/admit/manifest.c"],
    "config": ["host/admit/config.c:config_defaults,string_array,parse_policy,meant,parse_capsule,parse_config,config_parse,config_free",
               "host/admit/requests.c"],
    "launch_doc": ["common/launch_doc.c", "launcher/bwrap_argv.c"],  # parse, encode round trip, argv
    "launcher": ["launcher/launch_prepare.c", "launcher/bwrap_argv.c"],
    "attest_report": ["host/attest/attest_report.c"],
    "schema": ["host/admit/schema_check.c", "host/admit/schema_validate.c"],
    # The reader, from memory and from a descriptor (the harness reads each
    # input both ways); bundle_write is pack's file handling, not a parser.
    "bundle": ["host/admit/bundle.c:reader,inflated_max,archive_failure,read_entry_data,read_all,read_bundle,bundle_read_memory,bundle_read_fd,bundle_contents_free",
               "host/admit/bundle_gunzip.c"],
    # The writer, and the reader on what it wrote: a well-formed archive
    # never meets read_all's refusals, which the bundle harness covers.
    "bundle_roundtrip": ["host/admit/bundle.c:bundle_write_fd,add_entry,bundle_read_fd,read_bundle,reader,inflated_max,bundle_contents_free"],
    "bundle_admission": ["host/admit/capsule.c:capsule_admit_bundle,capsule_check_digest",
                         "host/admit/policy.c",
                         "host/admit/bundle.c:bundle_read_path,bundle_read_fd,read_bundle,reader,inflated_max,read_all,archive_failure,read_entry_data,bundle_contents_free"],
    "mcp": ["host/serve/mcp.c",
            "host/serve/scheduler.c:drop_slot,refuse,start_next,scheduler_in_flight,scheduler_admit,scheduler_cancel"],
    "runtime_scan": ["common/runtime_scan.c:runtime_elf_interpreter,runtime_parse_ld_list"],
    "cell_reports": ["host/cell/cell_reports.c"],
    "node_version": ["common/node_version.c"],
    "statement": ["host/statement/dsse.c:dsse_pae,dsse_base64,dsse_unbase64,invalid,read_envelope,read_bundle,dsse_parse,dsse_verify,dsse_parsed_free",
                    "host/statement/statement.c:statement_read",
                    "host/statement/statement_values.c",
                    "host/statement/file_uri.c:unreserved,encode,hex_digit,file_uri_path"],
}


def line_coverage(harness, corpus, work):
    """Covered/total lines per target file after replaying every file of corpus."""
    binary = OUT / "cov" / f"fuzz_{harness}"
    raw = work / "raw"
    shutil.rmtree(raw, ignore_errors=True)
    raw.mkdir(parents=True)
    files = sorted(str(p) for p in corpus.iterdir() if p.is_file())
    env = {**os.environ, "LLVM_PROFILE_FILE": str(raw / "%p-%m.profraw")}
    for i in range(0, len(files), 500):  # argv stays bounded
        subprocess.run([str(binary), *files[i:i + 500]], env=env, capture_output=True, timeout=600)
    profile = work / "merged.profdata"
    subprocess.run(["llvm-profdata", "merge", "-sparse", "-o", str(profile), *map(str, raw.iterdir())],
                   check=True, capture_output=True)
    out = {}
    for target in TARGETS[harness]:
        path, _, functions = target.partition(":")
        if not functions:
            report = subprocess.run(["llvm-cov", "export", "-summary-only", str(binary),
                                     f"-instr-profile={profile}", str(ROOT / path)],
                                    check=True, capture_output=True, text=True).stdout
            lines = json.loads(report)["data"][0]["files"][0]["summary"]["lines"]
            out[target] = (lines["covered"], lines["count"])
            continue
        # Per function: llvm-cov report's table (name, regions, missed, cover,
        # lines, missed lines, ...); static functions are shown as file.c:name.
        report = subprocess.run(["llvm-cov", "report", "-show-functions", str(binary),
                                 f"-instr-profile={profile}", str(ROOT / path)],
                                check=True, capture_output=True, text=True).stdout
        covered = total = 0
        for row in report.splitlines():
            cols = row.split()
            if len(cols) >= 7 and cols[0].rsplit(":", 1)[-1] in functions.split(","):
                total += int(cols[4])
                covered += int(cols[4]) - int(cols[5])
        out[target] = (covered, total)
    return out


def one(harness):
    work = OUT / "coverage" / harness
    shutil.rmtree(work, ignore_errors=True)
    corpus = work / "corpus"
    corpus.mkdir(parents=True)
    for d in (FUZZ / "seeds" / harness, FUZZ / "corpus" / harness):
        if d.is_dir():
            for p in d.iterdir():
                shutil.copy2(p, corpus / p.name)
    before = line_coverage(harness, corpus, work)
    options = FUZZ / "options" / f"{harness}.options"
    max_len = re.search(r"max_len = (\d+)", options.read_text()) if options.exists() else None
    run = subprocess.run([str(OUT / "libfuzzer" / f"fuzz_{harness}"), f"-max_total_time={SECONDS}",
                          "-timeout=10", "-rss_limit_mb=2048", "-print_final_stats=1",
                          f"-dict={FUZZ / 'dict' / (harness + '.dict')}",
                          f"-artifact_prefix={work}/crash-",
                          *([f"-max_len={max_len.group(1)}"] if max_len else []), str(corpus)],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"fuzz_{harness} failed:\n{run.stderr[-2000:]}")
    execs = int(re.search(r"stat::average_exec_per_sec:\s+(\d+)", run.stderr).group(1))
    after = line_coverage(harness, corpus, work)
    # What the run found joins the smoke corpus, which `make -C fuzz corpus`
    # merges, minimized, into the kept corpus.
    found = OUT / "corpus" / harness
    found.mkdir(parents=True, exist_ok=True)
    for p in corpus.iterdir():
        if not (found / p.name).exists():
            shutil.copy2(p, found / p.name)
    return harness, execs, before, after, len(list(corpus.iterdir()))


def main():
    rows = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for harness, execs, before, after, entries in pool.map(one, TARGETS):
            for f in TARGETS[harness]:
                b, a = before.get(f, (0, 0)), after.get(f, (0, 0))
                pct = lambda c: f"{100 * c[0] / c[1]:.1f}%" if c[1] else "n/a"
                rows.append(f"| {harness} | {execs} | {entries} | `{f}` | {pct(b)} ({b[0]}/{b[1]}) | "
                            f"{pct(a)} ({a[0]}/{a[1]}) |")
    text = "\n".join([f"# Fuzz coverage: seeds + kept corpus, then {SECONDS} s of libFuzzer", "",
                      "| harness | execs/s | corpus after | file | lines before | lines after |",
                      "|---|---:|---:|---|---:|---:|", *rows]) + "\n"
    print(text)
    (OUT / "coverage.md").write_text(text)


if __name__ == "__main__":
    main()
