// Drives `capsule-host serve` with the official MCP TypeScript SDK v2
// client (@modelcontextprotocol/client, StdioClientTransport) and prints
// what it saw as one JSON object.
//   node client-v2.mjs HOST CONFIG MODE   (MODE: auto = 2026-07-28 via
//   server/discover with handshake fallback; legacy = the 2025 handshake)
// The config must publish corpus_echo and corpus_raw (a call that sleeps).
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { progressThenCancel } from "./slow-call.mjs";

const [host, config, mode] = process.argv.slice(2);
const transport = new StdioClientTransport({ command: host, args: ["serve", "--config", config], stderr: "inherit" });
const client = new Client({ name: "dsh-capsule-pytest-v2", version: "1.0.0" }, { versionNegotiation: { mode } });
const clientErrors = [];
client.onerror = (e) => clientErrors.push(String(e?.message ?? e));
await client.connect(transport);
const out = {
  era: client.getProtocolEra(),
  version: client.getNegotiatedProtocolVersion(),
  server: client.getServerVersion(),
  instructions: client.getInstructions(),
  tools: (await client.listTools()).tools.map((t) => t.name),
  echo: await client.callTool({ name: "corpus_echo", arguments: { text: "via SDK v2" } }),
  badInput: await client.callTool({ name: "corpus_echo", arguments: { text: 42 } }),
  prompts: (await client.listPrompts()).prompts.map((p) => p.name),
  prompt: await client.getPrompt({ name: "corpus.guidance" }),
};
const call = (options) => client.callTool({ name: "corpus_raw", arguments: {} }, options);
Object.assign(out, await progressThenCancel(call, async () => (await client.listTools()).tools.length));
try {
  await client.callTool({ name: "no_such_tool", arguments: {} });
} catch (e) {
  out.unknownTool = String(e.message);
}
await client.close();
out.clientErrors = clientErrors;
console.log(JSON.stringify(out));
