"""A raw JSON-RPC peer for `capsule-host serve`, for scenarios the SDK
client cannot script (cancellation timing, shutdown with calls in flight,
load)."""
import json
import os
import select
import subprocess
import time
from pathlib import Path

from capsule_lab import BIN

MODERN = "2026-07-28"


class Serve:
    def __init__(self, lab, config, binary=None, extra_env=None, extra_args=(), stderr_pipe=False):
        """stderr_pipe: serve's stderr is a pipe the test reads only when it
        chooses (self.p.stderr), as a client that never drains it."""
        self.stderr_path = lab.tmp / f"serve-stderr-{time.monotonic_ns()}.log"
        self.stderr = open(self.stderr_path, "wb")
        self.p = subprocess.Popen([str(binary or BIN / "capsule-host"), "serve", "--config", str(config),
                                   *map(str, extra_args)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE if stderr_pipe else self.stderr,
                                  env={"PATH": os.environ["PATH"], "TMPDIR": str(lab.stage),
                                       **(extra_env or {})})
        self.buf = b""
        self.responses = {}
        self.messages = []  # everything received, in order (notifications too)
        self.unique_ids = True  # a second response under one id fails the test
        lab.keep.append(self)  # ended at teardown if the test did not (end)

    def send(self, obj):
        self.p.stdin.write((json.dumps(obj) + "\n").encode())
        self.p.stdin.flush()

    def recv(self, timeout=30.0):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no message from capsule-host serve")
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if r:
                chunk = os.read(self.p.stdout.fileno(), 65536)
                if not chunk:
                    return None
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        msg = json.loads(line)
        self.messages.append(msg)
        if "id" in msg:
            if self.unique_ids and msg["id"] is not None:
                assert msg["id"] not in self.responses, f"duplicate response for id {msg['id']}"
            self.responses[msg["id"]] = msg
        return msg

    def recv_or_none(self, timeout):
        """A message, or None if none arrived within timeout (EOF raises)."""
        try:
            msg = self.recv(timeout)
        except TimeoutError:
            return None
        if msg is None:
            raise EOFError("serve closed stdout")
        return msg

    def request(self, id, method, params=None):
        self.send({"jsonrpc": "2.0", "id": id, "method": method, **({"params": params} if params else {})})
        while id not in self.responses:
            if self.recv() is None:
                raise EOFError("serve closed stdout")
        return self.responses[id]

    def send_raw(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def next_response(self, timeout=30.0):
        """The next message that is a response (notifications are kept in messages)."""
        while True:
            msg = self.recv(timeout)
            if msg is None:
                raise EOFError("serve closed stdout")
            if "id" in msg:
                return msg

    def modern(self, id, method, params=None, version=MODERN, capabilities=None, meta=None):
        """A stateless 2026-07-28 request: version and capabilities in _meta."""
        m = {"io.modelcontextprotocol/protocolVersion": version,
             "io.modelcontextprotocol/clientCapabilities": {} if capabilities is None else capabilities,
             **(meta or {})}
        if capabilities is False:
            del m["io.modelcontextprotocol/clientCapabilities"]
        return self.request(id, method, {**(params or {}), "_meta": m})

    def initialize(self):
        r = self.request(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                           "clientInfo": {"name": "pytest", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return r

    def call(self, id, tool, arguments=None):
        self.send({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                   "params": {"name": tool, "arguments": arguments or {}}})

    def close(self, timeout=30):
        self.p.stdin.close()
        while self.recv(timeout) is not None:
            pass
        rc = self.p.wait(timeout)
        self.stderr.close()
        return rc

    def end(self):
        """The lab's teardown: a serve that a failed test left running is
        closed (stdin EOF), or killed if it does not end, so that its cells
        never outlive the test into the next test's count."""
        if self.p.poll() is None:
            try:
                self.close()
            except (TimeoutError, subprocess.TimeoutExpired, OSError, ValueError):
                self.p.kill()
                self.p.wait()
        self.stderr.close()

    def children(self):
        """serve's direct children as (pid, state, argv[0] basename): its
        supervisors (forks of capsule-host), adopted processes, zombies."""
        kids = []
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                stat = open(f"/proc/{d}/stat").read()
                cmd = open(f"/proc/{d}/cmdline", "rb").read().split(b"\0")[0]
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[1]) == self.p.pid:
                kids.append((int(d), fields[0], os.path.basename(cmd).decode(errors="replace")))
        return kids

    def rss_kib(self):
        for line in open(f"/proc/{self.p.pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0


def run_serve_case(lab, config, spec, ws=None, awaited=()):
    """Runs a corpus case's serve steps, then closes stdin (which cancels
    what is still in flight). awaited: ids of calls the case says complete;
    their answers are waited for first (up to 60 s), so a loaded machine's
    slow cell start is not read as a cancelled call."""
    s = Serve(lab, config)
    s.initialize()
    for step in spec["steps"]:
        if "call" in step:
            c = step["call"]
            s.call(c["id"], c.get("tool", "corpus_raw"), c.get("input"))
        elif "cancel" in step:
            s.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": step["cancel"], "reason": "test"}})
        elif "sleepMs" in step:
            end = time.monotonic() + step["sleepMs"] / 1000
            while time.monotonic() < end:
                r, _, _ = select.select([s.p.stdout], [], [], max(0, end - time.monotonic()))
                if r and s.recv(1) is None:
                    break
        elif "ping" in step:
            assert s.request(step["ping"], "ping")["result"] == {}
        elif "terminate" in step:
            s.p.terminate()
        elif "killIdleCells" in step:
            # Every cell process now is an idle warm cell's: SIGKILL its node.
            import signal
            from capsule_lab import cell_processes
            for pid, cmd in cell_processes():
                if cmd[0] == b"/runtime/node":
                    os.kill(pid, signal.SIGKILL)
        elif "replaceWorkspaceFile" in step:
            f = Path(ws) / step["replaceWorkspaceFile"]
            os.rename(f, f.with_name(f.name + ".old"))  # the old inode stays alive
            f.write_text("replaced while a warm cell waited\n")
        elif "recycleWorkspaceInode" in step:
            # The granted file deleted, a FIFO made and deleted, a new file
            # made: on ext4 the new file gets the freed inode number unless
            # something still holds the old inode.
            # The attacker tries until the number comes back (ext4 usually
            # gives it at once, but other files made meanwhile on the same
            # filesystem can take it first); while the host holds the old
            # inode it never can.
            f = Path(ws) / step["recycleWorkspaceInode"]
            granted = f.stat().st_ino
            f.unlink()
            os.mkfifo(f)
            f.unlink()
            decoys = []
            for i in range(500):  # new files until one gets the number
                d = f.with_name(f".recycle-{i}")
                d.write_text("a new file under a recycled inode number\n")
                if d.stat().st_ino == granted:
                    d.rename(f)  # the same inode, under the granted name
                    break
                decoys.append(d)
            else:
                f.write_text("a new file under a recycled inode number\n")
            for d in decoys:
                d.unlink()
        elif "tamperStaged" in step:
            # Rewrite a file the host staged, in place (same inode).
            for d in lab.stage.iterdir():
                for f in d.glob(step["tamperStaged"]):
                    os.chmod(f, 0o600)
                    f.write_text("// tampered after staging\n")
    deadline = time.monotonic() + 60
    try:
        while not all(i in s.responses for i in awaited):
            if s.recv(max(0.0, deadline - time.monotonic())) is None:
                break  # serve ended: close() returns its status
    except TimeoutError:
        pass  # the case's own check names what is missing
    rc = s.close()
    return rc, s.responses, s.stderr_path.read_text()
