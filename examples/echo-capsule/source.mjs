// Echo capsule: one tool that returns its input, and one static prompt section.
import { runCapsuleGuest } from "dsh-capsule/guest";

runCapsuleGuest({
  tools: [
    {
      name: "capsule_echo",
      description: "Echo the given text back unchanged.",
      inputSchema: {
        type: "object",
        properties: { text: { type: "string", maxLength: 4096 } },
        required: ["text"],
        additionalProperties: false,
      },
      execute: async ({ text }) => ({ text }),
    },
  ],
  promptSections: [
    {
      id: "capsule.echo.guidance",
      text: "Use capsule_echo to check that the capsule host is reachable; it returns its input.",
    },
  ],
});
