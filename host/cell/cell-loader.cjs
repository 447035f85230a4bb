// Host-owned cell loader: the first code that runs in every cell
// (launcher -> bwrap -> node). It announces itself, answers the host's
// attestation probe, and only on "load" runs the guest as the main module;
// from then on the guest owns stdin and stdout. It takes exactly one frame
// at a time out of process.stdin and leaves every later byte buffered there
// for the guest. Before "ready" it sets up what every guest load needs
// (the stdin pipe, the ESM loader), so a warm cell pays for that while it
// waits rather than after its call arrives. It is the main function of the
// cell's startup snapshot when the host built one, and the entry script
// otherwise. No dependencies: small enough to audit at a glance.
"use strict";
const v8 = require("node:v8");

const MAX_FRAME = 65536; // host -> loader frames are tiny

function send(message) {
  const body = Buffer.from(JSON.stringify(message), "utf8");
  const frame = Buffer.alloc(4 + body.length);
  frame.writeUInt32BE(body.length, 0);
  body.copy(frame, 4);
  process.stdout.write(frame);
}

// The next whole frame from stdin (paused mode, exact reads); exits when the
// host closes stdin first.
function readFrame(stdin) {
  return new Promise((resolve) => {
    const take = () => {
      const head = stdin.read(4);
      if (head === null) return;
      const length = head.readUInt32BE(0);
      if (length > MAX_FRAME) process.exit(3);
      const body = length === 0 ? Buffer.alloc(0) : stdin.read(length);
      if (body === null) {
        stdin.unshift(head);
        return;
      }
      stdin.removeListener("readable", take);
      stdin.removeListener("end", ended);
      resolve(JSON.parse(body.toString("utf8")));
    };
    const ended = () => process.exit(0);
    stdin.on("readable", take);
    stdin.on("end", ended);
    take();
  });
}

function permissionModelActive() {
  // Without the permission model process.permission is undefined.
  return Boolean(process.permission) && !process.permission.has("fs.read", "/etc/passwd");
}

// What the permission model of this Node line refuses, measured: each
// scope is tried where the model answers first and synchronously, on a
// target that leaves nothing behind (a path no allowlist names, an
// abstract socket). Node 20-24 do not restrict the network; 26 does.
function permissionScopes() {
  const tries = {
    "fs.read": () => require("node:fs").readFileSync("/etc/hostname"),
    "fs.write": () => require("node:fs").writeFileSync("/runtime/.scope-probe", ""),
    child: () => require("node:child_process").spawnSync("/runtime/node", ["-e", "0"]),
    worker: () => new (require("node:worker_threads").Worker)("0", { eval: true }).terminate(),
    wasi: () => new (require("node:wasi").WASI)({ version: "preview1" }),
    net: () => { const s = require("node:net").createServer(); s.listen("\0capsule-scope-probe"); s.close(); },
    inspector: () => require("node:inspector").open(0),
  };
  const out = {};
  for (const [scope, attempt] of Object.entries(tries)) {
    try {
      attempt();
      out[scope] = "allowed";
    } catch (e) {
      out[scope] = e && e.code === "ERR_ACCESS_DENIED" ? "denied" : `failed: ${e && e.code}`;
    }
  }
  return out;
}

function probeReport(challenge) {
  const report = process.report.getReport();
  return {
    type: "attest.result",
    challenge,
    version: process.version,
    execPath: process.execPath,
    sharedObjects: report.sharedObjects,
    pid: process.pid,
    uid: process.getuid(),
    gid: process.getgid(),
    permissionModel: permissionModelActive(),
    permissionScopes: permissionScopes(),
    snapshot: snapshotInUse,
  };
}

let snapshotInUse = false;

// The ESM loader, initialised on an empty module (a snapshot's main
// function has no import() of its own: vm lends it the default loader).
function warmEsmLoader() {
  const vm = require("node:vm");
  const script = new vm.Script('import("data:text/javascript,export{}")', {
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  return script.runInThisContext();
}

async function main() {
  // The guest is the last argument (after the loader's own path when the
  // loader is the entry script); the guest sees itself as argv[1].
  const guest = process.argv[process.argv.length - 1];
  const stdin = process.stdin;
  require("node:module");
  await warmEsmLoader();
  send({ type: "loader.ready" });
  for (;;) {
    const message = await readFrame(stdin);
    if (message.type === "attest") {
      send(probeReport(message.challenge));
    } else if (message.type === "load") {
      process.argv.splice(1, process.argv.length - 1, guest);
      require("node:module").runMain(guest);
      return;
    } else if (message.type === "shutdown") {
      send({ type: "shutdown.ack" });
      process.exit(0);
    } else {
      process.exit(3);
    }
  }
}

if (v8.startupSnapshot.isBuildingSnapshot()) {
  v8.startupSnapshot.setDeserializeMainFunction(() => {
    snapshotInUse = true;
    main();
  });
} else {
  main();
}
