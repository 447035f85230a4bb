// dsh-capsule-host: the DeepSeek Harness row around `capsule-host serve`.
//
// This plugin holds no guest code and no policy: it writes the row's config
// (the seed's field names) to a private file, starts the C host through
// DSH's managed subprocess service, reads what the host published over MCP,
// and registers those tools (ctx.tools) and static prompt sections
// (ctx.systemPrompt), all or nothing, before DSH's first turn: `apply` is
// async, so DSH's startup waits for it (as it does for its own MCP client
// row). Every failure is contained: DSH keeps running, nothing stays
// registered, and one log line carries the stable code and the fix. Every
// check and every cell stays in capsule-host.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { activationTimeout, PACKAGE_ROOT, resolveHostCommand, RowError } from "./host-command.mjs";
import { McpPeer, readPublication } from "./mcp-peer.mjs";

export const name = "dsh-capsule-host";
export const inject = ["tools", "systemPrompt", "subprocess"];

const PROMPT_ORDER = 150; // 100-199: tool guidance
const ERRORS_MD = `${PACKAGE_ROOT}/docs/ERRORS.md`;
const OUTPUT_SCHEMA = { type: "object", properties: { output: {} }, required: ["output"], additionalProperties: false };

function toolDefinition(peer, tool) {
  return {
    name: tool.name,
    description: tool.description,
    parameters: tool.inputSchema,
    output: {
      schema: OUTPUT_SCHEMA,
      render: (_args, value) => [{ type: "text", text: JSON.stringify(value.output) }],
    },
    async execute(args) {
      const result = await peer.request("tools/call", { name: tool.name, arguments: args ?? {} });
      const text = result.content?.map((c) => c.text).join("\n") ?? "";
      if (result.isError) throw new Error(text); // DSH turns a throw into an isError result
      return { output: result.structuredContent ?? JSON.parse(text) };
    },
  };
}

// DSH keeps ctx.logger in a buffer that its UIs show but a headless run does
// not print; the line goes to stderr as well, as DSH's own fatal errors do.
function report(ctx, event, line) {
  ctx.logger?.error?.(line);
  process.stderr.write(`${line}\n`);
  ctx.emit?.(...event);
}

function deadline(ms) {
  let timer;
  const promise = new Promise((_, reject) => {
    timer = setTimeout(
      () => reject(new RowError("ROW_ACTIVATION_TIMEOUT", `capsule-host published nothing within activationTimeoutMs (${ms})`)),
      ms,
    );
  });
  return { promise, clear: () => clearTimeout(timer) };
}

export async function apply(ctx, config = {}) {
  const capsules = config.capsules ?? [];
  if (capsules.length === 0) return; // the inert row the bundle mounts
  const { hostCommand, activationTimeoutMs, ...hostConfig } = config;
  const failed = (error) => {
    const code = error.code ?? "ROW_HOST_EXITED";
    // ROW_* messages say what to run; the host's own codes point at their
    // "What to do" in the error catalogue the package carries.
    const fix = code.startsWith("ROW_") ? "" : ` (what to do: ${ERRORS_MD}, ${code})`;
    report(
      ctx,
      ["dsh-capsule/failed", { code, message: error.message }],
      `dsh-capsule-host: activation failed, nothing registered: ${code}: ${error.message}${fix}`,
    );
  };
  let host, timeoutMs;
  try {
    host = resolveHostCommand(hostCommand);
    timeoutMs = activationTimeout(activationTimeoutMs);
  } catch (error) {
    failed(error);
    return;
  }

  const dir = mkdtempSync(join(tmpdir(), "dsh-capsule-row-"));
  const configPath = join(dir, "host.json");
  writeFileSync(configPath, JSON.stringify(hostConfig), { mode: 0o600 });
  // The host reads its config once, at start: the file goes as soon as the
  // host has answered (or failed), so the deployment policy is not left on disk.
  const forgetConfig = () => rmSync(dir, { recursive: true, force: true });
  // The host's own shutdown budget (cancel, then join its cells), plus a second.
  const graceMs = (config.shutdownTimeoutMs ?? 500) + (config.processGraceMs ?? 500) + 1000;
  const handle = ctx.subprocess.spawn({
    argv: [host, "serve", "--config", configPath],
    cwd: dir,
    stdio: { stdin: "pipe", stdout: "pipe", stderr: "pipe" },
    graceMs,
  });
  const peer = new McpPeer(handle);
  const disposers = [];
  let disposed = false;
  const withdraw = () => {
    for (const dispose of disposers.splice(0).reverse()) dispose();
  };
  let stopping;
  const stopHost = () =>
    (stopping ??= (async () => {
      handle.stdin?.end();
      const exited = await handle.waitForExit(AbortSignal.timeout(graceMs)).catch(() => false);
      if (!exited) {
        handle.terminate(); // SIGTERM, then SIGKILL after graceMs
        await peer.done;
      }
    })());
  // Disposing the row: registrations go first, then the host gets stdin EOF,
  // cancels and joins every cell, and exits.
  ctx.effect(() => async () => {
    disposed = true;
    withdraw();
    await stopHost();
    forgetConfig();
  }, "capsule-host serve");

  const limit = deadline(timeoutMs);
  let published;
  try {
    published = await Promise.race([readPublication(peer), limit.promise]);
  } catch (error) {
    if (!disposed) {
      await stopHost();
      await peer.done;
      // A JSON-RPC error carries its own code; a host that exited printed one.
      failed(error instanceof RowError || error.code ? error : peer.hostFailure(error.message));
    }
    return;
  } finally {
    limit.clear();
    forgetConfig();
  }
  if (disposed) return;
  // All or nothing: everything was read before anything is registered.
  try {
    for (const tool of published.tools) disposers.push(ctx.tools.register(toolDefinition(peer, tool)));
    for (const s of published.sections)
      disposers.push(ctx.systemPrompt.section({ name: s.name, order: PROMPT_ORDER, text: s.text }));
  } catch (error) {
    withdraw();
    await stopHost();
    // Cordis unloads a row whose injected services changed while it started
    // (and loads it again): that is a disposal, not a failure.
    if (error.code !== "INACTIVE_EFFECT")
      failed(new RowError("ROW_REGISTRATION_REFUSED", `DSH refused a registration: ${error.message}`));
    return;
  }
  ctx.emit?.("dsh-capsule/ready", { tools: published.tools.map((t) => t.name), sections: published.sections.map((s) => s.name) });
  // A host that dies later takes everything it published with it.
  peer.done.then(() => {
    if (disposed) return;
    withdraw();
    const error = peer.hostFailure("capsule-host exited");
    report(
      ctx,
      ["dsh-capsule/withdrawn", { code: error.code, message: error.message }],
      `dsh-capsule-host: capsule-host stopped, every tool and section withdrawn: ${error.code}: ${error.message}`,
    );
  });
}
