// Host-owned cell probe: runs inside a real cell (launcher -> bwrap -> node)
// during attestation and reports what that world looks like. No SDK, no
// dependencies: it must stay small enough to audit at a glance.
import process from "node:process";

let pending = Buffer.alloc(0);

function send(message) {
  const body = Buffer.from(JSON.stringify(message), "utf8");
  const header = Buffer.alloc(4);
  header.writeUInt32BE(body.length, 0);
  process.stdout.write(Buffer.concat([header, body]));
}

function permissionModelActive() {
  // Without the permission model process.permission is undefined.
  return Boolean(process.permission) && !process.permission.has("fs.read", "/etc/passwd");
}

function handle(message) {
  if (message.type === "attest") {
    const report = process.report.getReport();
    send({
      type: "attest.result",
      challenge: message.challenge,
      version: process.version,
      execPath: process.execPath,
      sharedObjects: report.sharedObjects,
      pid: process.pid,
      uid: process.getuid(),
      gid: process.getgid(),
      permissionModel: permissionModelActive(),
    });
  } else if (message.type === "shutdown") {
    send({ type: "shutdown.ack" });
    process.exit(0);
  } else {
    process.exit(3);
  }
}

process.stdin.on("data", (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  while (pending.length >= 4) {
    const length = pending.readUInt32BE(0);
    if (pending.length < 4 + length) return;
    const body = pending.subarray(4, 4 + length).toString("utf8");
    pending = pending.subarray(4 + length);
    handle(JSON.parse(body));
  }
});
process.stdin.on("end", () => process.exit(0));
