// dsh-capsule/guest: the guest side of protocol dsh-capsule/0.
//
//   import { runCapsuleGuest } from "dsh-capsule/guest";
//   runCapsuleGuest({
//     tools: [{ name, description, inputSchema, execute(input, ctx) {...} }],
//     promptSections: [{ id, text }],
//   });
//
// Frames on stdin/stdout are a 4-byte big-endian length followed by that many
// bytes of UTF-8 JSON. stdout belongs to the protocol: console output is sent
// to stderr so a stray console.log cannot corrupt a frame.
import process from "node:process";

const PROTOCOL = "dsh-capsule/0";

function encodeFrame(message) {
  const body = Buffer.from(JSON.stringify(message), "utf8");
  const header = Buffer.alloc(4);
  header.writeUInt32BE(body.length, 0);
  return Buffer.concat([header, body]);
}

function redirectConsoleToStderr() {
  const toStderr = (...args) => {
    process.stderr.write(args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" ") + "\n");
  };
  for (const method of ["log", "info", "debug", "warn", "error", "trace"]) console[method] = toStderr;
}

function checkDefinition(definition) {
  const tools = definition?.tools ?? [];
  const promptSections = definition?.promptSections ?? [];
  if (!Array.isArray(tools) || !Array.isArray(promptSections)) {
    throw new TypeError("runCapsuleGuest: tools and promptSections must be arrays");
  }
  for (const tool of tools) {
    if (typeof tool?.name !== "string" || typeof tool.execute !== "function") {
      throw new TypeError("runCapsuleGuest: every tool needs a name and an execute function");
    }
  }
  return { tools, promptSections };
}

function describe({ tools, promptSections }) {
  return {
    type: "describe.result",
    tools: tools.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema ?? { type: "object" },
    })),
    promptSections: promptSections.map((s) => ({ id: s.id, text: s.text })),
  };
}

async function call({ tools }, message) {
  const tool = tools.find((t) => t.name === message.tool);
  if (!tool) return { type: "call.result", isError: true, message: `unknown tool ${message.tool}` };
  try {
    const output = await tool.execute(message.input, { tool: tool.name });
    return { type: "call.result", isError: false, output: output === undefined ? null : output };
  } catch (error) {
    return { type: "call.result", isError: true, message: String(error?.message ?? error) };
  }
}

export function runCapsuleGuest(definition) {
  const guest = checkDefinition(definition);
  redirectConsoleToStderr();
  const send = (message) => process.stdout.write(encodeFrame(message));
  let pending = Buffer.alloc(0);
  let busy = Promise.resolve();

  const handle = async (message) => {
    switch (message?.type) {
      case "describe":
        if (message.protocol !== PROTOCOL) process.exit(70);
        send(describe(guest));
        break;
      case "call":
        send(await call(guest, message));
        break;
      case "shutdown":
        send({ type: "shutdown.ack" });
        process.exit(0);
        break;
      default:
        // The host never sends anything else: fail closed rather than guess.
        process.exit(71);
    }
  };

  process.stdin.on("data", (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 4) {
      const length = pending.readUInt32BE(0);
      if (pending.length < 4 + length) return;
      const message = JSON.parse(pending.subarray(4, 4 + length).toString("utf8"));
      pending = pending.subarray(4 + length);
      busy = busy.then(() => handle(message));
    }
  });
  process.stdin.on("end", () => busy.then(() => process.exit(0)));
}
