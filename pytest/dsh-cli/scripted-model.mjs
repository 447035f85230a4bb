// Test-only DSH plugin: a scripted model provider ("scripted") that records
// each request it gets (system prompt, tool names, tool results) as a JSON
// line in config.record. First turn: if config.tool is offered, call it with
// config.arguments; otherwise, and once a result is back, answer in text.
// No network: pytest/test_dsh_cli.py mounts it with a --patch overlay.
import { appendFileSync } from "node:fs";

export const name = "capsule-scripted-model";
export const inject = ["llm"];

class ScriptedAdapter {
  constructor(config) { this.config = config; }
  providerInfo(provider) { return { id: provider, name: provider }; }
  providerRetryPolicy() { return undefined; }
  listModels() { return Promise.resolve([]); }
  resolveModel(provider, model) { return Promise.resolve({ provider, id: model, name: model }); }
  async *stream(options) {
    const tools = (options.tools ?? []).map((t) => t.name);
    const results = options.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []))
      .filter((b) => b.type === "tool-result");
    appendFileSync(this.config.record, JSON.stringify({ purpose: options.purpose ?? null, system: options.system ?? "", tools, results }) + "\n");
    const want = this.config.tool;
    if (!options.purpose && results.length === 0 && tools.includes(want)) {
      const block = { type: "tool-call", id: "call-1", name: want, arguments: JSON.stringify(this.config.arguments ?? {}) };
      yield { type: "block-start", index: 0, blockType: "tool-call" };
      yield { type: "tool-call-delta", index: 0, id: "call-1", name: want, argumentsDelta: block.arguments };
      yield { type: "block-end", index: 0, block };
      yield { type: "usage", usage: { inputTokens: 1, outputTokens: 1 } };
      yield { type: "finish", reason: { kind: "tool-calls" } };
      return;
    }
    const text = results.length ? `result: ${JSON.stringify(results[0].content)}` : `no ${want}`;
    yield { type: "block-start", index: 0, blockType: "text" };
    yield { type: "text-delta", index: 0, text };
    yield { type: "block-end", index: 0, block: { type: "text", text } };
    yield { type: "usage", usage: { inputTokens: 1, outputTokens: 1 } };
    yield { type: "finish", reason: { kind: "stop" } };
  }
}

export function apply(ctx, config) {
  ctx.llm.registerAdapter(["scripted"], new ScriptedAdapter(config));
}
