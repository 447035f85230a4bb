"""Runs capsule-launcher directly with a launch document built from real
files (the exact fd contract: 3 document, 4 status, 5 bwrap info), then
applies one mutation from the case and reads the launcher's verdict."""
import hashlib
import json
import os
import shutil
import subprocess

from capsule_lab import BIN, REPO, merge


def identity(path):
    st = os.stat(path)
    return {"dev": st.st_dev, "ino": st.st_ino}


def seccomp_digest(lab):
    """The digest the host attests: read from a real attestation report."""
    if not hasattr(seccomp_digest, "value"):
        res = lab.run("attest")
        seccomp_digest.value = res.json["attestation"]["seccompSha256"]
    return seccomp_digest.value


def inherit_contract():
    """dup2 onto the same number keeps close-on-exec (Python opens files
    non-inheritable): make fds 3-5 reach the launcher whatever they were."""
    for fd in (3, 4, 5):
        os.set_inheritable(fd, True)


def rfc_example():
    """The launch document example of docs/RFC.md section 8: the template
    (the C unit tests parse the same block), so the schema lives in the
    encoder/parser and the RFC, not here."""
    text = (REPO / "docs" / "RFC.md").read_text()
    section = text.split("## 8. The launch document", 1)[1]
    return json.loads(section.split("```json\n", 1)[1].split("```", 1)[0])


def base_document(lab):
    """The RFC example with real files: node, a guest, one workspace file."""
    guest = lab.tmp / "guest.mjs"
    guest.write_text("// launcher test artifact\n")
    node = os.path.realpath(shutil.which("node"))
    bwrap = os.path.realpath(shutil.which("bwrap"))
    ws = lab.tmp / "ws"
    (ws / "ref").mkdir(parents=True)
    (ws / "ref" / "file.txt").write_text("ws")
    doc = rfc_example()
    doc["bwrap"] = {"path": bwrap, **identity(bwrap)}
    doc["seccompSha256"] = seccomp_digest(lab)
    by_label = {m["label"]: m for m in reversed(doc["mounts"])}  # the first of each label
    runtime, guest_mount, workspace = by_label["runtime"], by_label["guest"], by_label["workspace-read"]
    loader_mount = by_label["loader"]
    loader = lab.tmp / "cell-loader.cjs"
    loader.write_bytes((REPO / "host" / "cell" / "cell-loader.cjs").read_bytes())
    loader_mount.update(source=str(loader), sha256=hashlib.sha256(loader.read_bytes()).hexdigest(),
                        **identity(loader))
    runtime.update(source=node, **identity(node))
    guest_mount.update(source=str(guest), sha256=hashlib.sha256(guest.read_bytes()).hexdigest(),
                       **identity(guest))
    workspace.update(root=str(ws), path="ref/file.txt", dest="/workspace/ref/file.txt",
                     **identity(ws / "ref" / "file.txt"))
    doc["mounts"] = [runtime, guest_mount, workspace, loader_mount]  # mutations index them 0-3
    return doc


def mutate(doc, lab, m):
    guest = lab.tmp / "guest.mjs"
    kind = m["kind"]
    if kind == "patch":
        return merge(doc, m["patch"])
    if kind == "mount":
        doc["mounts"][m["index"]] = merge(doc["mounts"][m["index"]], m["patch"])
    elif kind == "add-mount":
        doc["mounts"].append(m["mount"])
    elif kind == "runtime-mounts":
        # Many extra descriptors for the launcher to hold open.
        node = doc["mounts"][0]
        for i in range(m["count"]):
            doc["mounts"].append({**node, "dest": f"/runtime/extra{i}"})
    elif kind == "drop-mount":
        del doc["mounts"][m["index"]]
    elif kind == "guest-bytes-changed":
        guest.write_text("// swapped after staging\n")  # same inode, new bytes
    elif kind == "loader-bytes-changed":
        (lab.tmp / "cell-loader.cjs").write_text("// swapped after staging\n")  # same inode
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
        inherit_contract()
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


HELPER_SRC = "attack-corpus/tools/cell-helper.c"


def helper_binary():
    from capsule_lab import REPO, one_worker_at_a_time
    out = REPO / "build" / "test-helpers" / "cell-helper"
    src = REPO / HELPER_SRC
    with one_worker_at_a_time("test-helpers"):
        if not out.exists() or out.stat().st_mtime < src.stat().st_mtime:
            out.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(["cc", "-static", "-pthread", "-O1", "-o", str(out), str(src)], check=True)
    return out


def run_helper(lab, setup):
    """Runs the native test helper as a cell's /runtime/node through the
    real launcher. Returns (launcher status or None, helper report or None)."""
    import fcntl
    import pty
    import socket
    import termios
    doc = base_document(lab)
    helper = str(helper_binary())
    doc["mounts"][0] = {"label": "runtime", "source": helper, "dest": "/runtime/node", **identity(helper)}
    if setup.get("workspaceSocketIdentity"):
        f = lab.tmp / "ws" / "ref" / "file.txt"
        f.unlink()
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(f))
        s.listen(1)
        lab.keep.append(s)
        doc["mounts"][2].update(identity(f))  # the document names the socket itself
    doc_file = lab.tmp / "launch.json"
    doc_file.write_text(json.dumps(doc))
    doc_fd = os.open(doc_file, os.O_RDONLY)
    status_r, status_w = os.pipe()
    info_r, info_w = os.pipe()
    secret_fd = os.open(lab.secret, os.O_RDONLY) if setup.get("inheritFd") else -1
    master = slave = -1
    if setup.get("controllingTty"):
        master, slave = pty.openpty()

    def wire():
        if slave >= 0:
            os.setsid()
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
            os.dup2(slave, 0)
        os.dup2(doc_fd, 3)
        os.dup2(status_w, 4)
        os.dup2(info_w, 5)
        inherit_contract()
        if secret_fd >= 0:
            os.dup2(secret_fd, 9)  # inherited, not close-on-exec
        for fd in range(6, 1024):
            if fd != 9 or secret_fd < 0:
                try:
                    os.close(fd)
                except OSError:
                    pass

    env = {"CAPSULE_CANARY": "leaked-host-environment"} if setup.get("canaryEnv") else {}
    p = subprocess.Popen([str(BIN / "capsule-launcher")],
                         stdin=None if slave >= 0 else subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                         preexec_fn=wire, close_fds=False)
    for fd in (doc_fd, status_w, info_w, secret_fd, slave):
        if fd >= 0:
            os.close(fd)
    out, err = p.communicate(timeout=30)
    status = b""
    while chunk := os.read(status_r, 4096):
        status += chunk
    os.close(status_r)
    os.close(info_r)
    if master >= 0:
        os.close(master)
    if status:
        return json.loads(status), None
    assert p.returncode == 0, (p.returncode, err.decode(errors="replace"))
    return None, json.loads(out)
