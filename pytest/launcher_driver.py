"""Runs capsule-launcher directly with a launch document built from real
files (the exact fd contract: 3 document, 4 status, 5 bwrap info), then
applies one mutation from the case and reads the launcher's verdict."""
import hashlib
import json
import os
import shutil
import subprocess

from capsule_lab import BIN, merge


def identity(path):
    st = os.stat(path)
    return {"dev": st.st_dev, "ino": st.st_ino}


def base_document(lab):
    guest = lab.tmp / "guest.mjs"
    guest.write_text("// launcher test artifact\n")
    node = os.path.realpath(shutil.which("node"))
    bwrap = os.path.realpath(shutil.which("bwrap"))
    ws = lab.tmp / "ws"
    (ws / "ref").mkdir(parents=True)
    (ws / "ref" / "file.txt").write_text("ws")
    return {
        "protocol": "dsh-capsule-launch/0",
        "bwrap": {"path": bwrap, **identity(bwrap)},
        "tmpfsBytes": 1 << 20,
        "node": {"permissionFlag": "--experimental-permission", "maxOldSpaceSizeMb": 64,
                 "disableSigusr1": False},
        "mounts": [
            {"label": "runtime", "source": node, "dest": "/runtime/node", **identity(node)},
            {"label": "guest", "source": str(guest), "dest": "/guest/guest.mjs", **identity(guest),
             "sha256": hashlib.sha256(guest.read_bytes()).hexdigest()},
            {"label": "workspace-read", "root": str(ws), "path": "ref/file.txt",
             "dest": "/workspace/ref/file.txt", **identity(ws / "ref" / "file.txt")},
        ],
    }


def mutate(doc, lab, m):
    guest = lab.tmp / "guest.mjs"
    kind = m["kind"]
    if kind == "patch":
        return merge(doc, m["patch"])
    if kind == "mount":
        doc["mounts"][m["index"]] = merge(doc["mounts"][m["index"]], m["patch"])
    elif kind == "add-mount":
        doc["mounts"].append(m["mount"])
    elif kind == "drop-mount":
        del doc["mounts"][m["index"]]
    elif kind == "guest-bytes-changed":
        guest.write_text("// swapped after staging\n")  # same inode, new bytes
    elif kind == "guest-replaced":
        # Keep the old inode alive so the new file cannot reuse its number.
        os.rename(guest, lab.tmp / "old-guest.mjs")
        guest.write_text("// launcher test artifact\n")  # same bytes, new inode
    elif kind == "guest-symlink":
        real = lab.tmp / "real.mjs"
        os.rename(guest, real)
        os.symlink(real, guest)
    elif kind == "guest-fifo":
        guest.unlink()
        os.mkfifo(guest)
    elif kind == "workspace-symlink":
        f = lab.tmp / "ws" / "ref" / "file.txt"
        f.unlink()
        os.symlink(lab.secret, f)
    elif kind == "workspace-parent-symlink":
        ref = lab.tmp / "ws" / "ref"
        os.rename(ref, lab.tmp / "ws" / "real")
        os.symlink("real", ref)
    elif kind == "workspace-socket":
        import socket
        f = lab.tmp / "ws" / "ref" / "file.txt"
        f.unlink()
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(f))
        lab.keep.append(s)
    else:
        raise ValueError(kind)
    return doc


def run_launcher(lab, case):
    spec = case["launch"]
    if "raw" in spec:
        text = spec["raw"].encode()
    elif "rawSize" in spec:
        text = b"{" + b" " * spec["rawSize"] + b"}"
    else:
        doc = base_document(lab)
        for m in spec.get("mutations", []):
            doc = mutate(doc, lab, m)
        text = json.dumps(doc).encode()
    doc_file = lab.tmp / "launch.json"
    doc_file.write_bytes(text)
    doc_fd = os.open(doc_file, os.O_RDONLY)
    status_r, status_w = os.pipe()
    info_r, info_w = os.pipe()

    def wire():
        os.dup2(doc_fd, 3)
        os.dup2(status_w, 4)
        os.dup2(info_w, 5)
        os.closerange(6, 1024)

    p = subprocess.Popen([str(BIN / "capsule-launcher")], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={},
                         preexec_fn=wire, close_fds=False)
    os.close(doc_fd)
    os.close(status_w)
    os.close(info_w)
    status = b""
    while chunk := os.read(status_r, 4096):
        status += chunk
    os.close(status_r)
    os.close(info_r)
    if not status:
        p.kill()  # the launcher exec'd bwrap: the case failed open; stop the cell
    p.communicate(timeout=30)
    return p.returncode, json.loads(status) if status else None
