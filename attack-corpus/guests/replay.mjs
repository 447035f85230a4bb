// contributes: {"tools":["corpus_replay"],"promptSections":[]}
// Answers each call with the exact bytes its input names: the frame body is
// {"type":"call.result","isError":false,"output":<input.hex, decoded>}, so a
// test can put any byte sequence where the host parses a guest's output
// (pytest/test_json_suite.py sends JSONTestSuite's files through it).
import fs from "node:fs";

const descriptor = { type: "describe.result", tools: [{ name: "corpus_replay", description: "Replays bytes as its output.", inputSchema: { type: "object", properties: { hex: { type: "string" } }, required: ["hex"], additionalProperties: false } }], promptSections: [] };
// stdout may be non-blocking: a frame larger than the pipe is written in
// parts, retrying on EAGAIN.
function frame(body) {
  const h = Buffer.alloc(4);
  h.writeUInt32BE(body.length, 0);
  const all = Buffer.concat([h, body]);
  for (let off = 0; off < all.length;) {
    try { off += fs.writeSync(1, all, off); } catch (e) { if (e.code !== "EAGAIN") throw e; }
  }
}
let pending = Buffer.alloc(0);
process.stdin.on("data", (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  while (pending.length >= 4 && pending.length >= 4 + pending.readUInt32BE(0)) {
    const n = pending.readUInt32BE(0);
    const message = JSON.parse(pending.subarray(4, 4 + n).toString("utf8"));
    pending = pending.subarray(4 + n);
    if (message.type === "describe") frame(Buffer.from(JSON.stringify(descriptor)));
    else if (message.type === "call")
      frame(Buffer.concat([Buffer.from('{"type":"call.result","isError":false,"output":'), Buffer.from(message.input.hex, "hex"), Buffer.from("}")]));
    else if (message.type === "shutdown") { frame(Buffer.from('{"type":"shutdown.ack"}')); process.exit(0); }
  }
});
