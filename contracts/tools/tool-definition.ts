import type { z } from 'zod';

/**
 * How the scheduler may run one call. Decided per call, not per tool, because the same
 * tool can be both: `http_request` GET only reads, POST may change the world.
 * - `read_only`: may run in parallel with other read-only calls and is retried by Temporal.
 * - `side_effecting`: runs alone, in call order, with at most one attempt and an idempotency key.
 */
export type ToolClass = 'read_only' | 'side_effecting';

export interface ToolTimeouts {
  /** The activity's startToCloseTimeout. Beyond it the call is an infrastructure failure that fails the step. */
  startToCloseMs: number;
  /** The activity's heartbeatTimeout. Set it for tools that can run long, so a lost worker is noticed in seconds. */
  heartbeatMs?: number;
}

export interface ToolDefinition<I> {
  name: string;
  /** What the model reads to decide when and how to call the tool. */
  description: string;
  /** Validated in the workflow before dispatch and again in the activity (the trust boundary). */
  input: z.ZodType<I>;
  /** Decided per call, e.g. http_request GET/HEAD read-only, others side-effecting. */
  classify(input: I): ToolClass;
  timeouts: ToolTimeouts;
}

/** Keeps the literal name in the type, so implementations can be checked against the registry. */
export function defineBuiltinTool<N extends string, I>(definition: ToolDefinition<I> & { name: N }): ToolDefinition<I> & { name: N } {
  return Object.freeze(definition);
}

/**
 * Any tool, for lists and lookups. `unknown` works because `classify` is a method, which
 * TypeScript checks bivariantly, so every `ToolDefinition<I>` is assignable to it.
 */
export type AnyToolDefinition = ToolDefinition<unknown>;
