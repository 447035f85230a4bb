// dsh-capsule-host: the DeepSeek Harness row around `capsule-host serve`.
//
// This plugin holds no guest code and no policy: it writes the row's config
// (the seed's field names) to a private file, starts the C host through
// DSH's managed subprocess service, reads what the host published over MCP,
// and registers those tools (ctx.tools) and static prompt sections
// (ctx.systemPrompt), all or nothing. Disposing the row disposes them and
// the host. Every check and every cell stays in capsule-host.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const name = "dsh-capsule-host";
export const inject = ["tools", "systemPrompt", "subprocess"];

const DEFAULT_HOST = fileURLToPath(new URL("../build/bin/capsule-host", import.meta.url));
const PROMPT_ORDER = 150; // 100-199: tool guidance
const OUTPUT_SCHEMA = { type: "object", properties: { output: {} }, required: ["output"], additionalProperties: false };

class McpPeer {
  constructor(handle) {
    this.handle = handle;
    this.nextId = 1;
    this.pending = new Map();
    this.stderr = "";
    let buffer = "";
    handle.stdout.setEncoding("utf8");
    handle.stdout.on("data", (chunk) => {
      buffer += chunk;
      let nl;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        this.#receive(line);
      }
    });
    handle.stderr?.setEncoding("utf8");
    handle.stderr?.on("data", (chunk) => {
      this.stderr = (this.stderr + chunk).slice(-8192);
    });
    handle.done.then(() => {
      for (const { reject } of this.pending.values()) reject(this.#hostError("capsule-host exited"));
      this.pending.clear();
    });
  }

  #receive(line) {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      return;
    }
    const waiter = this.pending.get(msg.id);
    if (!waiter) return;
    this.pending.delete(msg.id);
    if (msg.error) waiter.reject(Object.assign(new Error(msg.error.message), { code: msg.error.data?.code }));
    else waiter.resolve(msg.result);
  }

  #hostError(fallback) {
    // capsule-host prints "capsule-host: CODE: message" on stderr when it fails closed.
    const m = /capsule-host: ([A-Z_]+): (.*)/.exec(this.stderr);
    return Object.assign(new Error(m ? `${m[1]}: ${m[2]}` : fallback), { code: m?.[1] ?? "HOST_EXITED" });
  }

  request(method, params) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.handle.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) }) + "\n");
    });
  }

  notify(method, params) {
    this.handle.stdin.write(JSON.stringify({ jsonrpc: "2.0", method, ...(params ? { params } : {}) }) + "\n");
  }
}

async function readPublication(peer) {
  await peer.request("initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "dsh-capsule-host", version: "0.1.0" },
  });
  peer.notify("notifications/initialized");
  const { tools } = await peer.request("tools/list");
  const { prompts } = await peer.request("prompts/list");
  const sections = [];
  for (const p of prompts) {
    const got = await peer.request("prompts/get", { name: p.name });
    sections.push({ name: p.name, text: got.messages[0].content.text });
  }
  return { tools, sections };
}

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

export function apply(ctx, config = {}) {
  const capsules = config.capsules ?? [];
  if (capsules.length === 0) return; // the inert row the bundle mounts
  const { hostCommand = DEFAULT_HOST, ...hostConfig } = config;
  const dir = mkdtempSync(join(tmpdir(), "dsh-capsule-row-"));
  const configPath = join(dir, "host.json");
  writeFileSync(configPath, JSON.stringify(hostConfig), { mode: 0o600 });
  const handle = ctx.subprocess.spawn({
    argv: [hostCommand, "serve", "--config", configPath],
    cwd: dir,
    stdio: { stdin: "pipe", stdout: "pipe", stderr: "pipe" },
    graceMs: (config.shutdownTimeoutMs ?? 500) + (config.processGraceMs ?? 500) + 1000,
  });
  const peer = new McpPeer(handle);
  const disposers = [];
  let disposed = false;
  // The host reads its config once, at start: the file goes as soon as the
  // host has answered (or failed), so the deployment policy is not left on disk.
  const forgetConfig = () => rmSync(dir, { recursive: true, force: true });
  const ready = readPublication(peer).finally(forgetConfig).then(
    ({ tools, sections }) => {
      if (disposed) return;
      // All or nothing: everything was read before anything is registered.
      for (const tool of tools) disposers.push(ctx.tools.register(toolDefinition(peer, tool)));
      for (const s of sections) disposers.push(ctx.systemPrompt.section({ name: s.name, order: PROMPT_ORDER, text: s.text }));
      ctx.emit?.("dsh-capsule/ready", { tools: tools.map((t) => t.name), sections: sections.map((s) => s.name) });
    },
    async (error) => {
      await handle.done.catch(() => {});
      const failure = peer.stderr ? /capsule-host: ([A-Z_]+): (.*)/.exec(peer.stderr) : null;
      const code = failure?.[1] ?? error.code ?? "HOST_EXITED";
      const message = failure?.[2] ?? error.message;
      process.stderr.write(`dsh-capsule-host: activation failed, nothing registered: ${code}: ${message}\n`);
      ctx.emit?.("dsh-capsule/failed", { code, message });
    },
  );
  // Disposing the row's fiber awaits this: registrations go first, then the
  // host gets stdin EOF, cancels and joins every cell, and exits.
  ctx.effect(() => async () => {
    disposed = true;
    for (const dispose of disposers.splice(0).reverse()) dispose();
    handle.stdin?.end();
    const exited = await handle.waitForExit(AbortSignal.timeout(10000)).catch(() => false);
    if (!exited) handle.terminate();
    forgetConfig();
  }, "capsule-host serve");
  ready.catch(() => {});
}
