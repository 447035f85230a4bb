// Types for dsh-capsule-guest: the guest side of protocol dsh-capsule/0.

/** A JSON Schema object in the subset the host checks (docs/RFC.md §7). */
export type InputSchema = {
  type: "object";
  properties?: Record<string, unknown>;
  required?: string[];
  additionalProperties?: boolean;
  [keyword: string]: unknown;
};

/** What a tool's execute receives besides its input. */
export interface ToolContext {
  /** The tool's own name. */
  tool: string;
}

/** One tool: its name must be in the capsule's manifest and the deployer's policy. */
export interface CapsuleTool<Input = any, Output = unknown> {
  name: string;
  description: string;
  /** Defaults to { type: "object" }; the host validates every call's input against it. */
  inputSchema?: InputSchema;
  /** Returns the tool's output (any JSON value); a thrown error becomes an isError result. */
  execute(input: Input, context: ToolContext): Output | Promise<Output>;
}

/** One static system-prompt section. */
export interface PromptSection {
  id: string;
  text: string;
}

export interface CapsuleGuest {
  tools?: CapsuleTool[];
  promptSections?: PromptSection[];
}

/**
 * Serves the guest on stdin/stdout (frames of protocol dsh-capsule/0) until the
 * host shuts the cell down. stdout belongs to the protocol: console output goes
 * to stderr.
 */
export function runCapsuleGuest(guest: CapsuleGuest): void;
