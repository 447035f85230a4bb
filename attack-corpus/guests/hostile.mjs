// contributes: {"tools":["hostile_probe"],"promptSections":[]}
// A hostile guest: tries each attack named in its input and reports, for
// each, whether it succeeded and which error code or errno stopped it.
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import childProcess from "node:child_process";
import { Worker } from "node:worker_threads";
import { createRequire } from "node:module";

const require = createRequire("/guest/guest.mjs");
const connect = (port, host) => new Promise((resolve, reject) => {
  const s = net.connect(port, host);
  s.setTimeout(2000, () => { s.destroy(); reject(Object.assign(new Error("timeout"), { code: "ETIMEDOUT" })); });
  s.on("connect", () => { s.destroy(); resolve("connected"); });
  s.on("error", reject);
});

const ATTACKS = {
  "read-file": (a) => fs.readFileSync(a.path, "utf8").slice(0, 200),
  "read-dir": (a) => fs.readdirSync(a.path).join(","),
  "write-file": (a) => { fs.writeFileSync(a.path, a.data ?? "pwned"); return "written"; },
  "append-file": (a) => { fs.appendFileSync(a.path, a.data ?? "pwned"); return "appended"; },
  "connect": (a) => connect(a.port, a.host ?? "127.0.0.1"),
  "spawn": () => childProcess.spawnSync("/runtime/node", ["-e", "0"]).status,
  "spawn-detached-sleeper": () => {
    const c = childProcess.spawn("/runtime/node", ["-e", "setInterval(()=>{},1000)"], { detached: true, stdio: "ignore" });
    c.unref();
    return "spawned " + c.pid;
  },
  "worker": () => new Promise((resolve, reject) => {
    const w = new Worker("process.exit(0)", { eval: true });
    w.on("exit", () => resolve("worker ran"));
    w.on("error", reject);
  }),
  "addon": () => { process.dlopen({ exports: {} }, "/runtime/node"); return "loaded"; },
  "inspector": () => { require("node:inspector").open(0, "127.0.0.1"); return "inspector open"; },
  "env": () => JSON.stringify(process.env),
  "fds": () => {
    const open = [];
    for (let fd = 0; fd < 256; fd++) {
      try {
        const st = fs.fstatSync(fd);
        open.push({ fd, type: st.isFile() ? "file" : st.isDirectory() ? "dir" : st.isSocket() ? "socket" : st.isFIFO() ? "fifo" : st.isCharacterDevice() ? "chardev" : "other", size: st.size });
      } catch {}
    }
    return JSON.stringify(open);
  },
  "read-fds": () => {
    // Node's fs.readSync on a raw fd bypasses the permission model: any
    // inherited host file would be readable this way.
    const read = [];
    for (let fd = 3; fd < 256; fd++) {
      try { if (!fs.fstatSync(fd).isFile()) continue; const b = Buffer.alloc(64); const n = fs.readSync(fd, b, 0, 64, 0); read.push({ fd, text: b.subarray(0, n).toString() }); } catch {}
    }
    return JSON.stringify(read);
  },
  "tmp-fill": (a) => {
    const chunk = Buffer.alloc(1 << 20, 120);
    let written = 0;
    const fd = fs.openSync("/tmp/fill", "w");
    try { while (written < a.bytes) { fs.writeSync(fd, chunk); written += chunk.length; } } finally { fs.closeSync(fd); }
    return "wrote " + written;
  },
  "heap-bomb": () => { const keep = []; for (;;) keep.push(new Array(1 << 20).fill(Math.random())); },
  "state-write": () => { fs.writeFileSync("/tmp/state", "from an earlier call"); globalThis.__state = 1; return "written"; },
  "state-read": () => fs.readFileSync("/tmp/state", "utf8"),
  "kill-pid1": () => { process.kill(1, "SIGKILL"); return "signalled"; },
  "kill-host": (a) => { process.kill(a.pid, "SIGTERM"); return "signalled"; },
  "uid": () => String(process.getuid()),
  "max-rss": () => String(process.resourceUsage().maxRSS),
  "fork-bomb": () => { for (let i = 0; i < 1000; i++) childProcess.spawn("/runtime/node", ["-e", "0"]); return "spawned 1000"; },
  // Touched memory outside the V8 heap makes the kernel's teardown of the
  // cell slow enough to outlast a tiny processGraceMs.
  "hold-memory-and-hang": (a) => {
    globalThis.__hold = Buffer.alloc(a.bytes).fill(1);
    return new Promise(() => setInterval(() => {}, 1 << 30));
  },
  "pid": () => String(process.pid),
  // Resource ceilings: each reports how far it got before it was stopped.
  "buffer-bomb": (a) => {
    const keep = [];
    let total = 0;
    try { while (total < a.bytes) { keep.push(Buffer.alloc(a.chunk ?? (64 << 20), 1)); total += a.chunk ?? (64 << 20); } }
    catch (e) { e.message = `after ${total} bytes: ${e.message}`; throw e; }
    globalThis.__keep = keep;
    return "allocated " + total;
  },
  "wasm-bomb": (a) => {
    const mem = new WebAssembly.Memory({ initial: 1, maximum: 65536 });
    let total = 65536;
    try { while (total < a.bytes) { mem.grow(1024); total += 1024 * 65536; new Uint8Array(mem.buffer).fill(1, total - (64 << 20), total); } }
    catch (e) { e.message = `after ${total} bytes: ${e.message}`; throw e; }
    globalThis.__keep = mem;
    return "grew to " + total;
  },
  // Node 20 returns "" when it could not write the report; Node 22 and 24
  // refuse the call under the permission model (ERR_ACCESS_DENIED).
  "report-to": (a) => {
    process.report.directory = a.dir;
    const written = process.report.writeReport(a.file ?? "r.json");
    if (!written) throw Object.assign(new Error("no report was written"), { code: "ENOTWRITTEN" });
    return written;
  },
  "listen-unix": (a) => new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on("error", reject);
    s.listen(a.path, () => { s.close(); resolve("listening on " + a.path); });
  }),
  "hostname": () => os.hostname(),
  "ignore-xcpu": () => { process.on("SIGXCPU", () => {}); return "handler installed"; },
  "cpu-burn": (a) => { const end = Date.now() + a.ms; let n = 0; while (Date.now() < end) n++; return "spun " + n; },
  // inotify watches and instances are charged to the host user's
  // max_user_watches/max_user_instances (the user namespace does not
  // separate them): each watch takes one, up to count.
  "inotify-watches": (a) => {
    fs.mkdirSync("/tmp/w", { recursive: true });
    const watchers = [];
    try { for (let i = 0; i < a.count; i++) { const p = `/tmp/w/${i}`; fs.writeFileSync(p, ""); watchers.push(fs.watch(p)); } }
    catch (e) { e.message = `after ${watchers.length} watches: ${e.message}`; throw e; }
    finally { for (const w of watchers) w.close(); }
    return "watched " + watchers.length;
  },
  "open-files": (a) => {
    const fds = [];
    try { while (fds.length < a.count) fds.push(fs.openSync("/guest/guest.mjs", "r")); }
    catch (e) { e.message = `after ${fds.length} opens: ${e.message}`; throw e; }
    finally { for (const fd of fds) fs.closeSync(fd); }
    return "opened " + fds.length;
  },
};

runCapsuleGuest({
  tools: [{
    name: "hostile_probe",
    description: "Tries the listed attacks and reports each outcome.",
    inputSchema: { type: "object" },
    execute: async ({ attempts = [] }) => {
      const report = {};
      for (const a of attempts) {
        const key = a.label ?? a.attack;
        try {
          const detail = await ATTACKS[a.attack](a);
          report[key] = { ok: true, detail: String(detail).slice(0, 4000) };
        } catch (e) {
          report[key] = { ok: false, code: e?.code ?? null, message: String(e?.message ?? e).slice(0, 300) };
        }
      }
      return report;
    },
  }],
  promptSections: [],
});
