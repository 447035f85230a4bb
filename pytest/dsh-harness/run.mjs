// Boots DSH's real services (cordis Context, SystemPrompt, ToolRuntime,
// LocalSubprocessRuntime) and the dsh-capsule-host row with the config
// file given, calls the echo tool, assembles the system prompt, disposes
// the row, and prints what it saw as one JSON object.
import { readdirSync, readFileSync } from "node:fs";
import { Context } from "@deepseek-ai/cordis";
import { SystemPrompt } from "@deepseek-ai/dsh-system-prompt";
import { ToolRuntime, validateJsonSchemaValue, assertSupportedJsonSchema } from "@deepseek-ai/dsh-tools";
import LocalSubprocessRuntime from "@deepseek-ai/dsh-subprocess-local";
import * as capsuleRow from "../../dsh/index.mjs";

const [configPath, hostCommand] = process.argv.slice(2);
const config = { ...JSON.parse(readFileSync(configPath, "utf8")), hostCommand };
const ctx = new Context();
ctx.plugin(SystemPrompt, {});
ctx.plugin(ToolRuntime, {});
ctx.plugin(LocalSubprocessRuntime);
const out = { events: [] };
const settled = new Promise((resolve) => {
  ctx.on("dsh-capsule/ready", (e) => { out.events.push({ ready: e }); resolve(); });
  ctx.on("dsh-capsule/failed", (e) => { out.events.push({ failed: e }); resolve(); });
});
const fork = ctx.plugin(capsuleRow, config);
await Promise.race([settled, new Promise((r) => setTimeout(r, 30000))]);
out.tools = ctx.tools.schemas().map((s) => s.name);
const echo = ctx.tools.get("capsule_echo");
if (echo) {
  assertSupportedJsonSchema(echo.output.schema);
  const value = await echo.execute({ text: "through DSH" }, {});
  out.echo = { value, schemaErrors: validateJsonSchemaValue(echo.output.schema, value), rendered: echo.output.render({}, value) };
  try {
    await echo.execute({ text: 42 }, {});
  } catch (e) {
    out.badInput = String(e.message);
  }
}
const read = ctx.tools.get("capsule_read");
if (read) out.read = await read.execute({}, {});
const assembly = await ctx.systemPrompt.assemble();
out.sections = assembly.sections.map((s) => ({ name: s.name, order: s.order, text: s.text }));
await fork.dispose();
// The served host exits on stdin EOF once its cells are joined: wait for it.
const serving = () => readdirSync("/proc").filter((p) => /^\d+$/.test(p)).some((p) => {
  try {
    const argv = readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0");
    return argv[0].endsWith("capsule-host") && argv[1] === "serve";
  } catch { return false; }
});
for (let i = 0; i < 100 && serving(); i++) await new Promise((r) => setTimeout(r, 50));
out.toolsAfterDispose = ctx.tools.schemas().map((s) => s.name);
out.sectionsAfterDispose = (await ctx.systemPrompt.assemble()).sections.map((s) => s.name);
console.log(JSON.stringify(out));
process.exit(0);
