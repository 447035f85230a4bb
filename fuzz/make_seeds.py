#!/usr/bin/env python3
"""Builds the committed seed corpora from the examples and the attack
corpus (manifests and configs materialised from the case patches, frames
from the raw-guest scripts, launch documents from the launcher cases)."""
import hashlib
import json
import re
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
manifests.append(json.dumps({**base_manifest, "contributes": {"tools": [f"t_{i}" for i in range(65)],
                                                                "promptSections": []}}))
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
configs.append(json.dumps({**LIMIT_DEFAULTS, "capsules": [{"bundle": "rel/x.capsule.tar.gz", "policy": policy}]}))
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
def nested(depth):
    v = {}
    for _ in range(depth):
        v = {"type": "object", "properties": {"x": v}}
    return v


# Limits of the harness (describe 256, prompt 512, 8 contributions, JSON depth 12;
# the message itself parses with depth 16):
# one step past each, and a call.result message past 16 * 256 bytes.
for tools, sections in (([{**_tool, "description": "d" * 257}, _other], [_section]),
                        ([_tool, _other], [{"id": "fuzz.section", "text": "p" * 513}]),
                        ([_tool, _other] + [{**_other, "name": f"t{i}"} for i in range(7)], [_section]),
                        ([{**_tool, "inputSchema": nested(6)}, _other], [_section])):  # schema depth 13
    messages.append(json.dumps({"type": "describe.result", "tools": tools, "promptSections": sections}))
chain = {}
for _ in range(12):
    chain = {"a": chain}  # depth 13: within the frame parser's 16, past the result's 12
messages += [json.dumps({"type": "call.result", "isError": False, "output": chain}),
             json.dumps({"type": "call.result", "isError": True, "message": "m" * 4097})]
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
# Caps (options/frame.options lets inputs reach them): a frame declared past
# 8192 bytes, then more unconsumed bytes than 2 * (8192 + 4).
frames += [b"\x3f" + struct.pack(">I", 9000) + b"{}", b"\x3f" + struct.pack(">I", 9000) + b" " * 16400]
write("frame", frames)

LOADER = {"label": "loader", "source": "/tmp/s/cell-loader.cjs", "dest": "/tmp/.capsule/cell-loader.cjs",
          "dev": 1, "ino": 7, "sha256": "b" * 64}
doc = {"protocol": "dsh-capsule-launch/0", "bwrap": {"path": "/usr/bin/bwrap", "dev": 1, "ino": 2},
       "tmpfsBytes": 1 << 20, "seccompSha256": "0" * 64,
       "ceilings": {"memoryBytes": 256 << 20, "cpuSeconds": 10, "fileBytes": 1 << 20, "openFiles": 128},
       "node": {"permissionFlag": "--experimental-permission", "maxOldSpaceSizeMb": 64, "disableSigusr1": False},
       "mounts": [{"label": "runtime", "source": "/usr/bin/node", "dest": "/runtime/node", "dev": 1, "ino": 3},
                  {"label": "runtime", "source": "/usr/lib/x86_64-linux-gnu/libc.so.6", "dest": "/lib/x86_64-linux-gnu/libc.so.6", "dev": 1, "ino": 4},
                  {"label": "guest", "source": "/tmp/s/guest-0.mjs", "dest": "/guest/guest.mjs", "dev": 1, "ino": 5, "sha256": "a" * 64},
                  LOADER,
                  {"label": "workspace-read", "root": "/ws", "path": "ref/file.txt", "dest": "/workspace/ref/file.txt", "dev": 1, "ino": 6}]}
SNAPSHOT = {"label": "snapshot", "source": "/tmp/s/snapshot.blob", "dest": "/runtime/snapshot.blob", "dev": 1, "ino": 8,
            "sha256": "c" * 64}


def mutated(base, m):
    """The launch document a corpus case's parse-level mutation makes, or None for the
    mutations of files (the launcher harness's fixture has its own)."""
    d = json.loads(json.dumps(base))
    if m["kind"] == "patch":
        return merge(d, m["patch"])
    if m["kind"] == "mount" and m["index"] < len(d["mounts"]):
        d["mounts"][m["index"]] = merge(d["mounts"][m["index"]], m["patch"])
        return d
    if m["kind"] == "add-mount":
        d["mounts"].append(m["mount"])
        return d
    if m["kind"] == "drop-mount":
        d["mounts"] = d["mounts"][:m["index"]] + d["mounts"][m["index"] + 1:]
        return d
    return None


LAUNCH_MUTATIONS = [m for c in CASES for m in c.get("launch", {}).get("mutations", [])]
docs = [json.dumps(doc), json.dumps({**doc, "mounts": doc["mounts"] + [SNAPSHOT]}),
        # Past LAUNCH_DOC_MAX_MOUNTS (256), and past its node limit.
        json.dumps({**doc, "mounts": [{}] * 257}), json.dumps({**doc, "mounts": [[[[[[[[1]]]]]]]]})]
docs += [json.dumps(d) for d in (mutated(doc, m) for m in LAUNCH_MUTATIONS) if d is not None]
write("launch_doc", docs)

# The launcher's whole path: the same document over fuzz_launcher.c's fixture,
# named through its {{tokens}}; the file mutations become fixture files.
F = "{{dir}}"
def fx(label, name, dest, hashed=False):
    m = {"label": label, "source": f"{F}/{name}", "dest": dest, "dev": "{{dev}}", "ino": f"{{{{ino:{name}}}}}"}
    return {**m, "sha256": f"{{{{sha:{name}}}}}"} if hashed else m
fixture_doc = {**doc, "bwrap": {"path": f"{F}/bwrap", "dev": "{{dev}}", "ino": "{{ino:bwrap}}"},
               "seccompSha256": "{{seccomp}}",
               "mounts": [fx("runtime", "node", "/runtime/node"), fx("runtime", "libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6"),
                          fx("guest", "guest.mjs", "/guest/guest.mjs", True),
                          fx("loader", "cell-loader.cjs", "/tmp/.capsule/cell-loader.cjs", True),
                          {"label": "workspace-read", "root": f"{F}/ws", "path": "ref/file.txt",
                           "dest": "/workspace/ref/file.txt", "dev": "{{dev}}", "ino": "{{ino:ws/ref/file.txt}}"}]}


def fixture_text(d):
    # Tokens stand for numbers: unquote them, so the substituted document is JSON.
    return re.sub(r'"(\{\{(?:dev|ino:[^}"]*)\}\})"', r"\1", json.dumps(d))


def with_mount(i, **patch):
    d = json.loads(json.dumps(fixture_doc))
    d["mounts"][i] = {**d["mounts"][i], **patch}
    return d


launcher_docs = [fixture_doc, {**fixture_doc, "mounts": fixture_doc["mounts"] + [fx("snapshot", "snapshot.blob", "/runtime/snapshot.blob", True)]},
                 with_mount(2, source=f"{F}/ws/fifo", ino="{{ino:ws/fifo}}"),            # guest turned into a FIFO
                 with_mount(2, source=f"{F}/ws/link.txt", ino="{{ino:ws/link.txt}}"),    # guest through a symlink
                 with_mount(2, ino="{{ino:node}}"),                                       # guest replaced
                 with_mount(2, sha256="{{sha:node}}"),                                    # guest bytes changed
                 with_mount(3, sha256="{{sha:guest.mjs}}"),                               # loader bytes changed
                 with_mount(4, path="link.txt", dest="/workspace/link.txt", ino="{{ino:ws/link.txt}}"),
                 with_mount(4, path="refl/file.txt", dest="/workspace/refl/file.txt"),     # parent now a symlink
                 with_mount(4, path="adir", dest="/workspace/adir", ino="{{ino:ws/adir}}"),
                 with_mount(4, root=f"{F}/missing"),
                 with_mount(0, source=f"{F}/missing"),
                 {**fixture_doc, "bwrap": {**fixture_doc["bwrap"], "ino": 1}},
                 {**fixture_doc, "seccompSha256": "0" * 64},
                 {**fixture_doc, "ceilings": {**fixture_doc["ceilings"], "openFiles": 1}}]
launcher_texts = [fixture_text(d) for d in launcher_docs]
launcher_texts += [fixture_text(d) for d in (mutated(fixture_doc, m) for m in LAUNCH_MUTATIONS) if d is not None]
launcher_texts.append(fixture_text(fixture_doc) + " " * 16384)  # past the harness's document cap
write("launcher", launcher_texts)

world = {"type": "attest.world.result", "challenge": "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
         "node": {"path": "/usr/bin/node", "dev": 1, "ino": "2", "size": 3, "mtimeNs": "0"}, "nodeVersion": "v20.20.2",
         "bwrap": {"path": "/usr/bin/bwrap", "dev": 0, "ino": "0", "size": 0, "mtimeNs": "0"},
         # fuzz_attest_report.c's host view, exactly: the world report that passes.
         "sharedObjects": [{"path": "/usr/lib/x86_64-linux-gnu/libc.so.6", "dev": 0, "ino": "0", "size": 0, "mtimeNs": "0",
                            "dest": "/lib/x86_64-linux-gnu/libc.so.6"},
                           {"path": "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "dev": 0, "ino": "0", "size": 0,
                            "mtimeNs": "0", "dest": "/lib64/ld-linux-x86-64.so.2"}],
         "mountNamespace": "mnt:[4026531832]", "root": {"dev": 1, "ino": "2"}, "uid": 0, "gid": 0}
cellr = {"type": "attest.result", "challenge": world["challenge"], "version": "v20.20.2", "execPath": "/runtime/node",
         "sharedObjects": ["linux-vdso.so.1", "/lib/x86_64-linux-gnu/libc.so.6"], "pid": 2, "uid": 0, "gid": 0,
         "permissionModel": True, "snapshot": False,
         "permissionScopes": {"fs.read": "denied", "fs.write": "denied", "child": "denied", "worker": "denied",
                              "wasi": "denied", "net": "allowed", "inspector": "denied"}}
reports = [b"\x01" + json.dumps(world).encode(), b"\x00" + json.dumps(cellr).encode(),
           b"\x02" + json.dumps({**cellr, "snapshot": True}).encode(), b"\x02" + json.dumps(cellr).encode(),
           b"\x00" + b"[" * 20, b"\x01{}"]
for patch in ({"challenge": "0" * 64}, {"node": {**world["node"], "ino": "9"}}, {"bwrap": {**world["bwrap"], "dev": 9}},
              {"sharedObjects": []}, {"mountNamespace": "mnt:[1]"}, {"root": {"dev": 1, "ino": "3"}}, {"uid": 1000},
              {"nodeVersion": 20}):
    reports.append(b"\x01" + json.dumps({**world, **patch}).encode())
for patch in ({"challenge": "0" * 64}, {"version": "v22.0.0"}, {"execPath": "/usr/bin/node"},
              {"sharedObjects": ["/etc/passwd"]}, {"sharedObjects": [1]}, {"sharedObjects": "x"},
              {"snapshot": True}, {"permissionModel": False}, {"permissionScopes": {"worker": "allowed"}},
              {"permissionScopes": []}):
    reports.append(b"\x00" + json.dumps({**cellr, **patch}).encode())
write("attest_report", reports)

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


def tar_bytes(entries, fmt=tarfile.USTAR_FORMAT):
    """entries: (name, data, kind, extra TarInfo attributes)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as t:
        for name, data, kind, *extra in entries:
            info = tarfile.TarInfo(name)
            for k, v in (extra[0] if extra else {}).items():
                setattr(info, k, v)
            if kind:
                info.type = kind
                info.linkname = "guest.mjs"
            else:
                info.size = len(data)
            t.addfile(info, io.BytesIO(data) if not kind else None)
    return buf.getvalue()


def tar_gz(entries, fmt=tarfile.USTAR_FORMAT):
    return gzip.compress(tar_bytes(entries, fmt), mtime=0)


def sparse_pax(name, data, offset=0, declared=None):
    """A PAX 1.0 GNU sparse entry: a map block (one region of data at offset), then data.
    It declares `declared` bytes (default: all of it), whatever the map says."""
    sparse_map = f"1\n{offset}\n{len(data)}\n".encode().ljust(512, b"\0")
    headers = {"GNU.sparse.major": "1", "GNU.sparse.minor": "0", "GNU.sparse.name": name,
               "GNU.sparse.realsize": str(len(data) + offset if declared is None else declared)}
    return (f"GNUSparseFile.0/{name}", sparse_map + data, None, {"pax_headers": headers})


echo = REPO / "examples" / "echo-capsule"
m, g = (echo / "capsule.json").read_bytes(), (echo / "guest.mjs").read_bytes()
bundles = [tar_gz([("capsule.json", m, None), ("guest.mjs", g, None)]),
           tar_gz([("./capsule.json", m, None), ("guest.mjs", g, None), ("x", b"", tarfile.SYMTYPE)]),
           tar_gz([("capsule.json", m, None), ("capsule.json", m, None)]),
           tar_gz([("../x", b"x", None)]),
           tar_gz([("guest.mjs", b"\0" * 70000, None)]),
           # The deeper shapes: not gzip, each non-regular type, a third entry,
           # pax headers and long names, a GNU sparse entry, a truncated stream.
           tar_bytes([("capsule.json", m, None), ("guest.mjs", g, None)]),
           tar_gz([("capsule.json", m, None), ("guest.mjs", g, None), ("g2.mjs", b"", tarfile.LNKTYPE)]),
           tar_gz([("capsule.json", m, None), ("fifo", b"", tarfile.FIFOTYPE)]),
           tar_gz([("capsule.json", m, None), ("tty", b"", tarfile.CHRTYPE)]),
           tar_gz([("capsule.json", m, None), ("d", b"", tarfile.DIRTYPE)]),
           tar_gz([("capsule.json", m, None), ("guest.mjs", g, None), ("extra.txt", b"x", None)]),
           tar_gz([("capsule.json", m, None, {"pax_headers": {"comment": "x" * 300}}),
                   ("guest.mjs", g, None, {"mtime": 1.5, "uname": "u" * 40})], tarfile.PAX_FORMAT),
           tar_gz([("capsule.json", m, None), ("d/" * 60 + "guest.mjs", g, None)], tarfile.GNU_FORMAT),
           tar_gz([("capsule.json", m, None), sparse_pax("guest.mjs", g)], tarfile.PAX_FORMAT),
           # Declares 16 bytes, inflates past the artifact limit: the header is no bound.
           tar_gz([("capsule.json", m, None), sparse_pax("guest.mjs", g, offset=70000, declared=16)], tarfile.PAX_FORMAT),
           tar_gz([("guest.mjs", g, None)]),
           tar_gz([("capsule.json", b" " * 8193, None)]),
           tar_gz([("capsule.json", m, None), ("guest.mjs", g, None)])[:-30],
           gzip.compress(b"", mtime=0),
           # The gzip layer's own refusals (bundle_gunzip.c): a second
           # member, bytes after the stream, a bomb past the inflate bound,
           # data after the tar archive's end blocks.
           tar_gz([("capsule.json", m, None), ("guest.mjs", g, None)]) + gzip.compress(b"", mtime=0),
           tar_gz([("capsule.json", m, None), ("guest.mjs", g, None)]) + b"junk",
           # (after a whole bundle: what follows its tar is read by the drain)
           gzip.compress(tar_bytes([("capsule.json", m, None), ("guest.mjs", g, None)]) + b"\0" * (1280 * 1024),
                         mtime=0),
           gzip.compress(tar_bytes([("capsule.json", m, None), ("guest.mjs", g, None)]) + b"\0" * 200000 +
                         b"\x01" + b"\0" * 511, mtime=0)]
write("bundle", bundles)
# The admission's own refusals beyond the reader's: another id, changed
# bytes, a manifest that does not parse, an entry the bundle does not hold.
write("bundle_admission", bundles + [tar_gz([("capsule.json", m.replace(b"example.echo", b"other.id"), None),
                                              ("guest.mjs", g, None)]),
                                     tar_gz([("capsule.json", m, None), ("guest.mjs", g + b" ", None)]),
                                     tar_gz([("capsule.json", b"{", None), ("guest.mjs", g, None)]),
                                     tar_gz([("capsule.json", m, None), ("other.mjs", g, None)])] +
      # The policy's refusals (the harness's policy: the echo example's, and
      # a grant of reference/context.txt): a tool or section it does not
      # allow, a request with an identical grant, and one without.
      [tar_gz([("capsule.json", json.dumps(dict(json.loads(m), **patch)).encode(), None), ("guest.mjs", g, None)])
       for patch in ({"contributes": {"tools": ["capsule_other"], "promptSections": []}},
                     {"contributes": {"tools": ["capsule_echo"], "promptSections": ["other.section"]}},
                     {"requests": [{"kind": "workspace-read", "path": "reference/context.txt"}]},
                     {"requests": [{"kind": "workspace-read", "path": "reference/other.txt"}]})])

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
                       "v20.20.2", "v2147483647.0.0", "v-1.2.3", "20.11.0",
                       # every line the end-of-life table names, and one it does not
                       "v21.7.3", "v25.1.0", "v26.12.1", "v18.19.1", "v27.0.0"])

# The harness's limits (manifest 4096, artifact 12288) and one byte past each.
write("bundle_roundtrip", [bytes([len(m) >> 8, len(m) & 0xff, 0]) + m + g,
                           bytes([0, 2, 1]) + b"{}" + b"export {}",
                           bytes([0, 0, 2]), bytes([0, 5, 3]) + b"hello",
                           bytes([0x10, 0x01, 0]) + b"m" * 4097 + b"a",
                           bytes([0, 2, 0]) + b"{}" + b"a" * 12289])

# Envelopes and bundles: the corpus's verify cases (signed by the test-only
# key the harness checks against), each also as a Sigstore bundle.
verify_envelopes = [t["content"] for c in CASES if c.get("argv", [""])[0] == "verify"
                    for t in c.get("tmpFiles", []) if t["path"] == "envelope.json"]
bundles = []
for text in verify_envelopes:
    try:
        env = json.loads(text)
    except ValueError:
        continue
    if isinstance(env, dict) and env.get("signatures"):
        bundles.append(json.dumps({"mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
                                   "verificationMaterial": {"publicKey": {"hint": env["signatures"][0].get("keyid", "")},
                                                            "tlogEntries": [],
                                                            "timestampVerificationData": {"rfc3161Timestamps": []}},
                                   "dsseEnvelope": env}))
write("statement", verify_envelopes + bundles + ["{}", "[]", '{"payload":"","payloadType":"","signatures":[]}'])
