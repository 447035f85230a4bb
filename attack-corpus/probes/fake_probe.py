#!/usr/bin/python3
"""Test-only world probe that misbehaves in the way its file name says.
Installed as capsule-probe beside a copy of capsule-host; the real probe
sits beside it as capsule-probe.real for the modes that alter its report."""
import json
import os
import struct
import subprocess
import sys
import time

MODE = open(os.path.join(os.path.dirname(os.path.realpath(sys.argv[0])), "probe-mode")).read().strip()


def read_frame(f):
    head = f.read(4)
    if len(head) < 4:
        sys.exit(5)
    (n,) = struct.unpack(">I", head)
    return json.loads(f.read(n))


def write_frame(f, obj):
    body = json.dumps(obj).encode()
    f.write(struct.pack(">I", len(body)) + body)
    f.flush()


stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
if MODE == "timeout":
    time.sleep(3600)
if MODE == "truncated":
    read_frame(stdin)
    stdout.write(struct.pack(">I", 100) + b'{"type":"attest.w')
    stdout.flush()
    sys.exit(0)
if MODE == "flood":
    read_frame(stdin)
    stdout.write(struct.pack(">I", 0x7FFFFFFF))
    stdout.write(b" " * (4 << 20))
    sys.exit(0)
if MODE == "stderr-flood":
    sys.stderr.write("x" * (1 << 20))
    sys.exit(0)
if MODE == "garbage":
    read_frame(stdin)
    write_frame(stdout, {"type": "attest.world.result"})
    sys.exit(0)

# Modes that alter one field of the real probe's report.
real = subprocess.Popen([os.path.join(os.path.dirname(os.path.realpath(sys.argv[0])), "capsule-probe.real")],
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
request = read_frame(stdin)
write_frame(real.stdin, request)
report = read_frame(real.stdout)
if MODE == "wrong-challenge":
    report["challenge"] = "0" * 64
elif MODE == "other-mount-namespace":
    report["mountNamespace"] = "mnt:[4026530000]"
elif MODE == "other-node":
    report["node"]["ino"] = str(int(report["node"]["ino"]) + 1)
elif MODE == "other-root":
    report["root"]["ino"] = str(int(report["root"]["ino"]) + 1)
elif MODE == "other-shared-objects":
    report["sharedObjects"] = report["sharedObjects"][1:]
elif MODE == "other-bwrap":
    report["bwrap"]["size"] += 1
write_frame(stdout, report)
bye = read_frame(stdin)
write_frame(real.stdin, bye)
write_frame(stdout, read_frame(real.stdout))
real.wait()
