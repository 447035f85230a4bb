// Drives `capsule-host serve` with the official MCP TypeScript SDK client
// (StdioClientTransport) and prints what it saw as one JSON object.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { progressThenCancel } from "./slow-call.mjs";

const [host, config] = process.argv.slice(2);
const transport = new StdioClientTransport({ command: host, args: ["serve", "--config", config], stderr: "inherit" });
const client = new Client({ name: "dsh-capsule-pytest", version: "1.0.0" });
const clientErrors = [];
client.onerror = (e) => clientErrors.push(String(e?.message ?? e));
await client.connect(transport);
const out = {
  server: client.getServerVersion(),
  instructions: client.getInstructions(),
  tools: (await client.listTools()).tools,
  echo: await client.callTool({ name: "capsule_echo", arguments: { text: "via the MCP SDK" } }),
  read: await client.callTool({ name: "capsule_read", arguments: {} }),
  badInput: await client.callTool({ name: "capsule_echo", arguments: { text: 42 } }),
  prompts: (await client.listPrompts()).prompts,
  prompt: await client.getPrompt({ name: "capsule.echo.guidance" }),
  ping: await client.ping(),
};
if (out.tools.some((t) => t.name === "corpus_raw")) {
  const call = (options) => client.callTool({ name: "corpus_raw", arguments: {} }, undefined, options);
  Object.assign(out, await progressThenCancel(call, async () => (await client.listTools()).tools.length));
}
try {
  await client.callTool({ name: "no_such_tool", arguments: {} });
} catch (e) {
  out.unknownTool = String(e.message);
}
// A lone surrogate is valid JSON syntax the strict parser refuses: the
// answer must carry the request's id (a short timeout proves it arrived).
try {
  const r = await client.callTool({ name: "capsule_echo", arguments: { text: "\ud800" } }, undefined, { timeout: 10000 });
  out.loneSurrogate = JSON.stringify(r);
} catch (e) {
  out.loneSurrogate = String(e.message);
}
await client.close();
out.clientErrors = clientErrors;
console.log(JSON.stringify(out));
