// contributes: {"tools":["corpus_raw"],"promptSections":[]}
// Speaks the frame protocol by hand so a case can script exactly what goes
// wrong in each phase (describe, call, shutdown): malformed frames, wrong
// order, silence, crashes, floods. Unscripted phases behave correctly.
import fs from "node:fs";

const descriptor = { type: "describe.result", tools: [{ name: "corpus_raw", description: "Raw protocol guest.", inputSchema: { type: "object" } }], promptSections: [] };
const defaults = { describe: descriptor, call: { type: "call.result", isError: false, output: { ok: true } }, shutdown: { type: "shutdown.ack" } };
const script = CASE.script ?? {};
// stdout may be non-blocking: a frame larger than the pipe is written in
// parts, retrying on EAGAIN.
const out = (b) => {
  for (let off = 0; off < b.length;) {
    try { off += fs.writeSync(1, b, off); } catch (e) { if (e.code !== "EAGAIN") throw e; }
  }
};
const header = (n) => { const h = Buffer.alloc(4); h.writeUInt32BE(n >>> 0, 0); return h; };
const frame = (buf) => Buffer.concat([header(buf.length), buf]);

async function act(a, phase) {
  if (a.sendDefault) out(frame(Buffer.from(JSON.stringify(defaults[phase]))));
  else if (a.send !== undefined) out(frame(Buffer.from(JSON.stringify(a.send))));
  else if (a.bodyText !== undefined) out(frame(Buffer.from(a.bodyText, "utf8")));
  else if (a.bodyHex !== undefined) out(frame(Buffer.from(a.bodyHex, "hex")));
  else if (a.hex !== undefined) out(Buffer.from(a.hex, "hex"));
  else if (a.header !== undefined) out(header(a.header));
  else if (a.floats !== undefined) out(frame(Buffer.from(JSON.stringify({ type: "call.result", isError: false, output: { v: new Array(a.floats).fill(1e-7) } }))));
  else if (a.emptyObjects !== undefined) out(frame(Buffer.from(`{"type":"call.result","isError":false,"output":[${new Array(a.emptyObjects).fill("{}").join(",")}]}`)));
  else if (a.padBody !== undefined) out(frame(Buffer.from("{}" + " ".repeat(a.padBody))));
  else if (a.stderr !== undefined) {
    // Node makes stderr non-blocking: retry on EAGAIN so the host's cap,
    // not a full pipe, is what stops the flood.
    const b = Buffer.alloc(4096, 120);
    for (let n = 0; n < a.stderr;) {
      try { n += fs.writeSync(2, b); } catch (e) { if (e.code !== "EAGAIN") throw e; }
    }
  }
  else if (a.exit !== undefined) process.exit(a.exit);
  else if (a.crash) process.abort();
  else if (a.hang) { setInterval(() => {}, 1 << 30); await new Promise(() => {}); }
  else if (a.ignoreTerm) process.on("SIGTERM", () => {});
  else if (a.busy) { for (;;) {} }
  else if (a.sleepMs !== undefined) await new Promise((r) => setTimeout(r, a.sleepMs));
  // Later, outside the phase: the next message is handled meanwhile, so a
  // describe cell shuts down first, and only a cell left waiting (a warm
  // cell, pre-loaded) lives to see it.
  else if (a.laterMs !== undefined) setTimeout(() => act(a.then, phase), a.laterMs);
}

let pending = Buffer.alloc(0);
let chain = Promise.resolve();
async function handle(message) {
  const phase = message.type;
  const actions = script[phase] ?? [{ sendDefault: true }];
  for (const a of actions) await act(a, phase);
  if (phase === "shutdown" && !script.shutdownStay) process.exit(0);
}
process.stdin.on("data", (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  while (pending.length >= 4) {
    const n = pending.readUInt32BE(0);
    if (pending.length < 4 + n) return;
    const message = JSON.parse(pending.subarray(4, 4 + n).toString("utf8"));
    pending = pending.subarray(4 + n);
    chain = chain.then(() => handle(message));
  }
});
if (script.atStart) chain = chain.then(async () => { for (const a of script.atStart) await act(a, "start"); });
