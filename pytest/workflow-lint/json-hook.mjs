// @actions/workflow-parser imports its JSON schemas without the `type:
// "json"` attribute Node requires (its own build is bundled); this hook
// supplies it for those two files.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export async function load(url, context, nextLoad) {
  if (url.endsWith(".json") && url.includes("/@actions/workflow-parser/"))
    return { format: "json", source: readFileSync(fileURLToPath(url), "utf8"), shortCircuit: true };
  return nextLoad(url, context);
}
