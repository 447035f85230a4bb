// contributes: {"tools":["corpus_echo"],"promptSections":["corpus.guidance"]}
// A well-behaved guest: the baseline every hostile case departs from.
runCapsuleGuest({
  tools: [{
    name: "corpus_echo",
    description: "Echo the input text.",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, additionalProperties: false },
    execute: async (input) => ({ text: input.text ?? null }),
  }],
  promptSections: [{ id: "corpus.guidance", text: "Corpus echo guidance." }],
});
