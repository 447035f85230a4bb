// The row's side of `capsule-host serve`: newline-delimited JSON-RPC over
// the host's stdin/stdout, and the host's stable error code read from its
// stderr ("capsule-host: CODE: message") when it fails closed.
const HOST_FAILURE = /capsule-host: ([A-Z_]+): (.*)/;

export class McpPeer {
  constructor(handle) {
    this.handle = handle;
    this.nextId = 1;
    this.pending = new Map();
    this.stderr = "";
    this.exited = false;
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
    // EPIPE from a host that died reaches the exit path below; an 'error'
    // event with no listener would throw in DSH's process.
    handle.stdin.on("error", () => {});
    handle.stderr?.setEncoding("utf8");
    handle.stderr?.on("data", (chunk) => {
      this.stderr = (this.stderr + chunk).slice(-8192);
    });
    // A host that cannot be spawned rejects `done`: that is an exit too, never
    // an unhandled rejection that would take DSH down.
    this.done = handle.done.then(
      (outcome) => this.#exit(undefined, outcome),
      (spawnError) => this.#exit(spawnError),
    );
  }

  #exit(spawnError, outcome) {
    this.exited = true;
    this.spawnError = spawnError;
    this.outcome = outcome;
    for (const { reject } of this.pending.values()) reject(this.hostFailure("capsule-host exited"));
    this.pending.clear();
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

  /** Why the host is gone: it could not be started, it printed its own code, or it just exited. */
  hostFailure(fallback) {
    if (this.spawnError)
      return Object.assign(new Error(`cannot start capsule-host: ${this.spawnError.message}`), { code: "ROW_HOST_NOT_FOUND" });
    const m = HOST_FAILURE.exec(this.stderr);
    if (m) return Object.assign(new Error(m[2]), { code: m[1] });
    const how = this.outcome?.signal ? ` (signal ${this.outcome.signal})` : this.outcome ? ` (status ${this.outcome.exitCode})` : "";
    const said = this.stderr.trim() ? `; stderr: ${this.stderr.trim().split("\n").slice(-3).join(" | ")}` : "";
    return Object.assign(new Error(`${fallback}${how}${said}`), { code: "ROW_HOST_EXITED" });
  }

  request(method, params) {
    if (this.exited) return Promise.reject(this.hostFailure("capsule-host exited"));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.#send({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) });
    });
  }

  notify(method, params) {
    if (!this.exited) this.#send({ jsonrpc: "2.0", method, ...(params ? { params } : {}) });
  }

  #send(message) {
    // A write to a host that has just died fails asynchronously (EPIPE);
    // the exit path answers every waiter, so the write error carries nothing.
    this.handle.stdin.write(JSON.stringify(message) + "\n", () => {});
  }
}

/** initialize, then every tool and every prompt section, read before anything is registered. */
export async function readPublication(peer) {
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
