// Reader capsule: reads the one workspace file it was granted, read-only.
import { readFile } from "node:fs/promises";
import { runCapsuleGuest } from "dsh-capsule/guest";

const CONTEXT = "/workspace/reference/context.txt";

runCapsuleGuest({
  tools: [
    {
      name: "capsule_read",
      description: "Return the text of the granted workspace file reference/context.txt.",
      inputSchema: { type: "object", properties: {}, additionalProperties: false },
      execute: async () => ({ path: "reference/context.txt", text: await readFile(CONTEXT, "utf8") }),
    },
  ],
  promptSections: [],
});
