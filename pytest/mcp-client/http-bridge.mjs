// Test-only: serves one `capsule-host serve` process over MCP Streamable
// HTTP, so the official conformance suite (HTTP-only) can drive it.
//   node http-bridge.mjs HOST CONFIG      prints "listening <url>" on stdout
// POST /mcp: a request is written to the host's stdin and answered with
// the host's response under the same id (application/json, or an SSE
// stream carrying the request's progress notifications first when the
// client accepts text/event-stream); notifications and responses are
// forwarded and answered 202. GET and DELETE: 405 (no server-initiated
// stream, no sessions). Requests whose Host or Origin is not this
// loopback address are refused 403 (DNS rebinding). The bridge adds no
// protocol of its own: every answer is capsule-host's.
import { spawn } from "node:child_process";
import { createServer } from "node:http";

const [host, config] = process.argv.slice(2);
const child = spawn(host, ["serve", "--config", config], { stdio: ["pipe", "pipe", "inherit"] });
const waiting = new Map(); // JSON id -> { res, sse }
let buffer = "";
child.stdout.setEncoding("utf8");
child.stdout.on("data", (chunk) => {
  buffer += chunk;
  let nl;
  while ((nl = buffer.indexOf("\n")) >= 0) {
    const line = buffer.slice(0, nl);
    buffer = buffer.slice(nl + 1);
    deliver(line);
  }
});
child.on("exit", () => process.exit(0));

function deliver(line) {
  const msg = JSON.parse(line);
  if (msg.method === "notifications/progress") {
    for (const w of waiting.values())
      if (w.sse && w.progressToken === msg.params.progressToken) w.res.write(`event: message\ndata: ${line}\n\n`);
    return;
  }
  const key = JSON.stringify(msg.id ?? null);
  const w = waiting.get(key);
  if (!w) return;
  waiting.delete(key);
  if (w.sse) {
    w.res.end(`event: message\ndata: ${line}\n\n`);
  } else {
    w.res.writeHead(200, { "content-type": "application/json" });
    w.res.end(line);
  }
}

const server = createServer((req, res) => {
  const { port } = server.address();
  const allowed = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  const origin = req.headers.origin;
  if (!allowed.has(req.headers.host) || (origin && !allowed.has(origin.replace(/^https?:\/\//, "")))) {
    res.writeHead(403, { "content-type": "application/json" });
    return res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "Host or Origin not allowed" } }));
  }
  if (req.url !== "/mcp") return res.writeHead(404).end();
  if (req.method !== "POST") return res.writeHead(405, { allow: "POST" }).end();
  let body = "";
  req.setEncoding("utf8");
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    let msg;
    try {
      msg = JSON.parse(body);
    } catch {
      msg = undefined;
    }
    const object = msg && typeof msg === "object" && !Array.isArray(msg);
    if (object && (!("id" in msg) || "result" in msg || "error" in msg)) {
      // A notification or a client response: forwarded, nothing comes back.
      child.stdin.write(JSON.stringify(msg) + "\n");
      return res.writeHead(202).end();
    }
    if (!object || !("method" in msg)) {
      // Broken JSON, a batch, an id without a method: the host answers it
      // (under the id it could read, or null).
      const id = object && (typeof msg.id === "string" || Number.isInteger(msg.id)) ? msg.id : null;
      waiting.set(JSON.stringify(id), { res, sse: false });
      child.stdin.write(body.replace(/\n/g, " ") + "\n");
      return;
    }
    const sse = (req.headers.accept ?? "").includes("text/event-stream") && msg.method === "tools/call";
    if (sse) res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    waiting.set(JSON.stringify(msg.id), { res, sse, progressToken: msg.params?._meta?.progressToken });
    child.stdin.write(JSON.stringify(msg) + "\n");
  });
});
server.listen(0, "127.0.0.1", () => console.log(`listening http://127.0.0.1:${server.address().port}/mcp`));
process.on("SIGTERM", () => child.stdin.end());
