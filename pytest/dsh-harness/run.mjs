// Boots DSH's real services (cordis Context, SystemPrompt, ToolRuntime,
// LocalSubprocessRuntime) and the dsh-capsule-host row with the config
// file given, calls the echo tool, assembles the system prompt, disposes
// the row, and prints what it saw as one JSON object.
//   node run.mjs CONFIG HOST [MODE]
// MODE: "call" (default); "kill-host": SIGKILL the served host once the row
// is ready and report what stays registered; "taken-name": a tool named
// capsule_read (the second one the row registers) exists before the row starts.
import { readdirSync, readFileSync } from "node:fs";
import { Context } from "@deepseek-ai/cordis";
import { SystemPrompt } from "@deepseek-ai/dsh-system-prompt";
import { ToolRuntime, validateJsonSchemaValue, assertSupportedJsonSchema } from "@deepseek-ai/dsh-tools";
import LocalSubprocessRuntime from "@deepseek-ai/dsh-subprocess-local";
import * as capsuleRow from "../../dsh/index.mjs";

const [configPath, hostCommand, mode = "call"] = process.argv.slice(2);
const config = { ...JSON.parse(readFileSync(configPath, "utf8")), ...(hostCommand ? { hostCommand } : {}) };
let unhandled = null;
process.on("unhandledRejection", (e) => { unhandled = String(e?.stack ?? e); });
const ctx = new Context();
// DSH's loader has its services running before it loads plugin rows.
await ctx.plugin(SystemPrompt, {});
await ctx.plugin(ToolRuntime, {});
await ctx.plugin(LocalSubprocessRuntime);
const out = { events: [] };
const events = (name) => new Promise((resolve) => ctx.on(name, (e) => { out.events.push({ [name.split("/")[1]]: e }); resolve(); }));
const settled = Promise.race([events("dsh-capsule/ready"), events("dsh-capsule/failed")]);
const withdrawn = events("dsh-capsule/withdrawn");
if (mode === "taken-name") {
  ctx.tools.register({
    name: "capsule_read", description: "taken", parameters: { type: "object" },
    output: { schema: { type: "object" }, render: () => [] }, execute: async () => ({}),
  });
}
// The host the row started: a `capsule-host serve` whose parent is this
// process (its supervisors, forked copies, have the host as parent).
const servers = () => readdirSync("/proc").filter((p) => /^\d+$/.test(p)).filter((p) => {
  try {
    const argv = readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0");
    const ppid = Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${p}/status`, "utf8"))[1]);
    return argv[0].endsWith("capsule-host") && argv[1] === "serve" && ppid === process.pid;
  } catch { return false; }
});
const started = Date.now();
const fork = ctx.plugin(capsuleRow, config);
// The row's apply is async: cordis's startup work; DSH waits for this.
await fork;
out.applyMs = Date.now() - started;
out.settledBeforeApplyReturned = out.events.length > 0;
out.tools = ctx.tools.schemas().map((s) => s.name);
if (mode === "kill-host") {
  for (const pid of servers()) process.kill(Number(pid), "SIGKILL");
  await Promise.race([withdrawn, new Promise((r) => setTimeout(r, 10000))]);
  out.toolsAfterDeath = ctx.tools.schemas().map((s) => s.name);
  out.sectionsAfterDeath = (await ctx.systemPrompt.assemble()).sections.map((s) => s.name);
}
const echo = mode === "call" ? ctx.tools.get("capsule_echo") : undefined;
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
const read = mode === "call" ? ctx.tools.get("capsule_read") : undefined;
if (read) out.read = await read.execute({}, {});
const assembly = await ctx.systemPrompt.assemble();
out.sections = assembly.sections.map((s) => ({ name: s.name, order: s.order, text: s.text }));
await fork.dispose();
// The served host exits on stdin EOF once its cells are joined: wait for it.
for (let i = 0; i < 100 && servers().length; i++) await new Promise((r) => setTimeout(r, 50));
out.toolsAfterDispose = ctx.tools.schemas().map((s) => s.name);
out.sectionsAfterDispose = (await ctx.systemPrompt.assemble()).sections.map((s) => s.name);
out.unhandled = unhandled;
console.log(JSON.stringify(out));
process.exit(0);
