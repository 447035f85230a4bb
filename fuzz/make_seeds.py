#!/usr/bin/env python3
"""Builds the committed seed corpora from the examples and the attack
corpus (manifests and configs materialised from the case patches, frames
from the raw-guest scripts, launch documents from the launcher cases)."""
import hashlib
import json
import struct
import sys
from pathlib import Path

FUZZ = Path(__file__).resolve().parent
REPO = FUZZ.parent
sys.path.insert(0, str(REPO / "pytest"))
from capsule_lab import LIMIT_DEFAULTS, merge  # noqa: E402

CASES = [json.loads(p.read_text()) for p in sorted((REPO / "attack-corpus" / "cases").rglob("*.json"))]


def write(harness, items):
    d = FUZZ / "seeds" / harness
    d.mkdir(parents=True, exist_ok=True)
    for old in d.iterdir():
        old.unlink()
    seen = set()
    for data in items:
        data = data if isinstance(data, bytes) else data.encode()
        name = hashlib.sha1(data).hexdigest()[:16]
        if name not in seen and len(data) < 65536:
            seen.add(name)
            (d / name).write_bytes(data)
    print(f"{harness}: {len(seen)} seeds")


base_manifest = json.loads((REPO / "examples" / "echo-capsule" / "capsule.json").read_text())
manifests = [(REPO / "examples" / n / "capsule.json").read_text() for n in ("echo-capsule", "reader-capsule")]
for c in CASES:
    if "manifestRaw" in c:
        manifests.append(c["manifestRaw"])
    elif "manifest" in c or "contributes" in c:
        m = merge(base_manifest, c.get("manifest", {}))
        if "contributes" in c:
            m["contributes"] = c["contributes"]
        manifests.append(json.dumps(m))
write("manifest", manifests)

policy = {"capsuleId": "example.echo", "tools": ["capsule_echo"], "promptSections": [], "grants": []}
configs = [json.dumps({**LIMIT_DEFAULTS, "capsules": [{"root": "/srv/capsule", "policy": policy}]})]
for c in CASES:
    if "configRaw" in c:
        configs.append(c["configRaw"])
    entry = merge({"root": "/srv/capsule", "manifest": "capsule.json", "workspaceRoot": "/srv/ws",
                   "policy": merge(policy, c.get("policy", {}))}, c.get("capsuleConfig", {}))
    cfg = {**LIMIT_DEFAULTS, **c.get("limits", {}), "capsules": [entry], **c.get("configPatch", {})}
    configs.append(json.dumps(cfg))
write("config", configs)

describe = {"type": "describe.result",
            "tools": [{"name": "capsule_echo", "description": "Echo.", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
                      {"name": "other_tool", "description": "Other.", "inputSchema": {"type": "object"}}],
            "promptSections": [{"id": "fuzz.section", "text": "Guidance."}]}
messages = [json.dumps(describe), json.dumps({"type": "call.result", "isError": False, "output": {"a": [1, 2]}}),
            json.dumps({"type": "call.result", "isError": True, "message": "boom"})]
for c in CASES:
    for actions in c.get("params", {}).get("script", {}).values():
        if isinstance(actions, list):
            for a in actions:
                if "send" in a:
                    messages.append(json.dumps(a["send"]))
                if "bodyText" in a:
                    messages.append(a["bodyText"])
# Seeds for the refusals the harness's fixed manifest makes reachable:
# duplicate tools, a prompt with "{{", counts that do not match.
_tool = {"name": "capsule_echo", "description": "Echo.", "inputSchema": {"type": "object"}}
_other = {"name": "other_tool", "description": "Other.", "inputSchema": {"type": "object"}}
_section = {"id": "fuzz.section", "text": "Guidance."}
for tools, sections in (([_tool, _tool], [_section]), ([_tool, _other], [{"id": "fuzz.section", "text": "{{secret}}"}]),
                        ([_tool], [_section]), ([_tool, _other, _other], [_section]), ([_tool, _other], []),
                        ([_tool, _other], [_section, _section])):
    messages.append(json.dumps({"type": "describe.result", "tools": tools, "promptSections": sections}))
write("guest_messages", messages)


def frame(body):
    body = body.encode() if isinstance(body, str) else body
    return struct.pack(">I", len(body)) + body


frames = [b"\x00" + frame(m) for m in messages] + [b"\x05" + frame(messages[0]) + frame(messages[1])]
for c in CASES:
    for actions in c.get("params", {}).get("script", {}).values():
        if isinstance(actions, list):
            for a in actions:
                if "hex" in a:
                    frames.append(b"\x03" + bytes.fromhex(a["hex"]))
                if "bodyHex" in a:
                    frames.append(b"\x01" + frame(bytes.fromhex(a["bodyHex"])))
write("frame", frames)

doc = {"protocol": "dsh-capsule-launch/0", "bwrap": {"path": "/usr/bin/bwrap", "dev": 1, "ino": 2},
       "tmpfsBytes": 1 << 20, "seccompSha256": "0" * 64,
       "ceilings": {"memoryBytes": 256 << 20, "cpuSeconds": 10, "fileBytes": 1 << 20, "openFiles": 128},
       "node": {"permissionFlag": "--experimental-permission", "maxOldSpaceSizeMb": 64, "disableSigusr1": False},
       "mounts": [{"label": "runtime", "source": "/usr/bin/node", "dest": "/runtime/node", "dev": 1, "ino": 3},
                  {"label": "runtime", "source": "/usr/lib/x86_64-linux-gnu/libc.so.6", "dest": "/lib/x86_64-linux-gnu/libc.so.6", "dev": 1, "ino": 4},
                  {"label": "guest", "source": "/tmp/s/guest-0.mjs", "dest": "/guest/guest.mjs", "dev": 1, "ino": 5, "sha256": "a" * 64},
                  {"label": "workspace-read", "root": "/ws", "path": "ref/file.txt", "dest": "/workspace/ref/file.txt", "dev": 1, "ino": 6}]}
docs = [json.dumps(doc)]
for c in CASES:
    for m in c.get("launch", {}).get("mutations", []):
        d = json.loads(json.dumps(doc))
        if m["kind"] == "patch":
            d = merge(d, m["patch"])
        elif m["kind"] == "mount":
            d["mounts"][m["index"]] = merge(d["mounts"][m["index"]], m["patch"])
        elif m["kind"] == "add-mount":
            d["mounts"].append(m["mount"])
        docs.append(json.dumps(d))
write("launch_doc", docs)

world = {"type": "attest.world.result", "challenge": "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
         "node": {"path": "/usr/bin/node", "dev": 1, "ino": 2, "size": 3, "mtimeNs": 0}, "nodeVersion": "v20.20.2",
         "bwrap": {"path": "/usr/bin/bwrap", "dev": 0, "ino": 0, "size": 0, "mtimeNs": 0}, "sharedObjects": [],
         "mountNamespace": "mnt:[4026531832]", "root": {"dev": 1, "ino": 2}, "uid": 0, "gid": 0}
cellr = {"type": "attest.result", "challenge": world["challenge"], "version": "v20.20.2", "execPath": "/runtime/node",
         "sharedObjects": ["linux-vdso.so.1", "/lib/x86_64-linux-gnu/libc.so.6"], "pid": 2, "uid": 0, "gid": 0,
         "permissionModel": True}
write("attest_report", [b"\x01" + json.dumps(world).encode(), b"\x00" + json.dumps(cellr).encode()])

schemas = [[{"type": "object", "properties": {"text": {"type": "string", "maxLength": 10}}, "required": ["text"],
             "additionalProperties": False}, {"text": "hi"}],
           [{"type": "object", "properties": {"n": {"type": ["integer", "null"], "minimum": 0, "maximum": 9},
                                              "xs": {"type": "array", "items": {"enum": [1, "a", None]}, "maxItems": 3}}},
            {"n": 3, "xs": [1, "a"]}],
           [{"type": "object", "additionalProperties": {"const": True}}, {"a": True}]]
for c in CASES:
    for t in c.get("params", {}).get("tools", []) or []:
        if "inputSchema" in t:
            schemas.append([t["inputSchema"], {}])
write("schema", [json.dumps(s) for s in schemas])

import gzip
import io
import tarfile


def tar_gz(entries):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as t:
        for name, data, kind in entries:
            info = tarfile.TarInfo(name)
            if kind:
                info.type = kind
                info.linkname = "guest.mjs"
            else:
                info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return gzip.compress(buf.getvalue(), mtime=0)


echo = REPO / "examples" / "echo-capsule"
m, g = (echo / "capsule.json").read_bytes(), (echo / "guest.mjs").read_bytes()
bundles = [tar_gz([("capsule.json", m, None), ("guest.mjs", g, None)]),
           tar_gz([("./capsule.json", m, None), ("guest.mjs", g, None), ("x", b"", tarfile.SYMTYPE)]),
           tar_gz([("capsule.json", m, None), ("capsule.json", m, None)]),
           tar_gz([("../x", b"x", None)]),
           tar_gz([("guest.mjs", b"\0" * 70000, None)])]
write("bundle", bundles)
write("bundle_admission", bundles + [tar_gz([("capsule.json", m.replace(b"example.echo", b"other.id"), None),
                                              ("guest.mjs", g, None)]),
                                     tar_gz([("capsule.json", m, None), ("guest.mjs", g + b" ", None)])])

# MCP sessions for fuzz_mcp: newline-separated JSON-RPC, both eras.
MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {}}


def session(*messages):
    return "\n".join(m if isinstance(m, str) else json.dumps(m) for m in messages) + "\n"


def rpc(id, method, params=None):
    return {"jsonrpc": "2.0", "id": id, "method": method, **({"params": params} if params is not None else {})}


init = rpc(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                             "clientInfo": {"name": "f", "version": "1"}})
call = {"name": "capsule_echo", "arguments": {"text": "x"}}
write("mcp", [
    session(init, {"jsonrpc": "2.0", "method": "notifications/initialized"}, rpc(1, "tools/list"),
            rpc(2, "tools/call", call), rpc(3, "prompts/list"), rpc(4, "prompts/get", {"name": "fuzz.section"}),
            rpc(5, "ping")),
    session(rpc(1, "server/discover", {"_meta": MODERN_META}), rpc("a", "tools/list", {"_meta": MODERN_META}),
            rpc(2, "tools/call", {**call, "_meta": {**MODERN_META, "progressToken": "t"}}),
            rpc(3, "prompts/get", {"name": "fuzz.section", "_meta": MODERN_META})),
    session(init, rpc(1, "tools/call", call), rpc(1, "tools/call", call), rpc(2, "tools/call", call),
            rpc(3, "tools/call", call), rpc(4, "tools/call", call),
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
            rpc(5, "tools/call", {"name": "fails_to_start", "arguments": {}}), "#shutdown",
            rpc(6, "tools/call", call)),
    session(rpc(1, "tools/list", {"_meta": {**MODERN_META, "io.modelcontextprotocol/protocolVersion": "1900-01-01"}}),
            rpc(2, "tools/list", {"cursor": "c", "_meta": MODERN_META}), '[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
            '{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"x":"a\\u0000b"}}',
            '{"jsonrpc":"2.0","id":null,"method":"ping"}', '{"jsonrpc":"1.0","id":3}', "{not json"),
    session('#verdict {"ok":true,"result":{"isError":false,"output":{"text":"x"}}}',
            '#verdict {"ok":true,"result":{"isError":true,"message":"tool failed"}}',
            '#verdict {"ok":false,"error":{"code":"CELL_CALL_TIMEOUT","message":"late"}}'),
])

# runtime_scan: real loader output and real ELF headers of this machine's node.
import shutil as _shutil
import subprocess as _subprocess
node = Path(_shutil.which("node")).resolve()
listing = _subprocess.run(["/lib64/ld-linux-x86-64.so.2", "--list", str(node)], capture_output=True).stdout
import re as _re
listing = _re.sub(rb"\(0x[0-9a-f]+\)", b"(0x00007f0000000000)", listing)  # no ASLR in a seed
head = node.read_bytes()[:8192]
write("runtime_scan", [listing, head, b"\tlinux-vdso.so.1 (0x00007ffc)\n\tlibx.so => not found\n",
                       b"\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f00)\n"])

write("cell_reports", ['{\n    "child-pid": 4242,\n    "cgroup-namespace": 4026531835,\n    "ipc-namespace": 4026532601\n}\n',
                       '{"code":"LAUNCH_SOURCE_MISMATCH","message":"guest changed"}',
                       '{"code":"NOT_A_CODE","message":"x"}', '{"child-pid": 1}', "{}"])

write("node_version", ["v20.11.0\n", "v20.10.9", "v22.13.0", "v22.14.1", "v23.5.0", "v23.7.0", "v24.22.3",
                       "v20.20.2", "v2147483647.0.0", "v-1.2.3", "20.11.0"])

write("bundle_roundtrip", [bytes([len(m) >> 8, len(m) & 0xff, 0]) + m + g,
                           bytes([0, 2, 1]) + b"{}" + b"export {}",
                           bytes([0, 0, 2]), bytes([0, 5, 3]) + b"hello"])
