// contributes: {"tools":["corpus_echo"],"promptSections":["corpus.guidance"]}
// A guest whose describe says whatever CASE.tools / CASE.promptSections say:
// extra or renamed tools, oversize text, deep schemas, template braces.
const pad = (spec) => {
  if (spec === "$random") return `changes every cell: ${Math.random()}`;
  return typeof spec === "object" && spec?.repeat ? spec.repeat.repeat(spec.times) : spec;
};
const deep = (n) => (n === 0 ? { type: "object" } : { type: "object", properties: { x: deep(n - 1) } });
const tools = (CASE.tools ?? [{ name: "corpus_echo", description: "Echo." }]).map((t) => ({
  name: t.name,
  description: pad(t.description),
  inputSchema: t.deepSchema ? deep(t.deepSchema) : (t.inputSchema ?? { type: "object" }),
  execute: async (input) => input,
}));
const promptSections = (CASE.promptSections ?? [{ id: "corpus.guidance", text: "Guidance." }]).map((s) => ({
  id: s.id,
  text: pad(s.text),
}));
runCapsuleGuest({ tools, promptSections });
