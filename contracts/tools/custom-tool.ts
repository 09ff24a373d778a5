import type { z } from 'zod';
import { PROVIDER_TOOL_NAME_MAX } from './mcp-tools';
import { BUILTIN_TOOLS } from './registry';
import { OUTPUT_TOOL_NAME } from '../structured-output';

/**
 * A tool of the user's own, as `defineTool` makes it (docs/tools.md#your-own-tools). The
 * definition is pure: the worker's activities run `run`, and the session workflow never
 * imports this module's values, only what the worker listed of a tool (its offer, in
 * ./custom-tool-offer.ts), from the session's log.
 */

/** What `run` gets besides its input: where the call is, and the means to be a good activity. */
export interface ToolContext {
  /**
   * The same on every attempt and every replay of this call, different for every other call
   * (the session, turn, step and the model's call id): give it to the system the call
   * changes, so a repeat is recognised there.
   */
  readonly idempotencyKey: string;
  /** Aborted when the turn is cancelled or the worker shuts down: stop, and let the error out. */
  readonly signal: AbortSignal;
  /**
   * Tells Temporal the call is alive (the worker also does it while `run` runs, every 2 s or
   * three times per heartbeat timeout when that is shorter, repeating the last `details`);
   * the last `details` come back to a retried attempt as `heartbeatDetails`.
   */
  heartbeat(details?: unknown): void;
  /** What the previous attempt of this call last gave `heartbeat`; undefined on a first attempt. */
  readonly heartbeatDetails?: unknown;
  /** The session's workflow id. */
  readonly sessionId: string;
  readonly turn: number;
  readonly step: number;
  /** The model's id for this call. */
  readonly callId: string;
}

/** Throw it for "the model should read this and try something else": it becomes an error result, never a failure. */
export class ToolError extends Error {
  override name = 'ToolError';
}

/** A definition `defineTool` refuses: the message is one line that names the tool and the problem. */
export class ToolDefinitionError extends Error {
  override name = 'ToolDefinitionError';
}

/** The documented defaults of a tool's options (docs/tools.md#options-and-defaults). */
export const CUSTOM_TOOL_DEFAULTS = {
  /** One attempt's limit; past it the call is an infrastructure failure under its lane's rule. */
  timeoutMs: 60_000,
  /** A killed worker is noticed within this; the worker heartbeats every 2 s while `run` runs. */
  heartbeatTimeoutMs: 10_000,
  /** Attempts of a read-only call (a side-effecting call always has one). */
  maxAttempts: 3,
  /** Characters of the result (a string as it is, anything else as its JSON) the model may be sent. */
  maxResultChars: 64 * 1024,
} as const;

/** The bounds of the options: Temporal's timers, and a result that stays far below the 2 MiB payload limit. */
const OPTION_BOUNDS = {
  timeoutMs: { min: 1, max: 24 * 60 * 60 * 1000 },
  heartbeatTimeoutMs: { min: 1_000, max: 24 * 60 * 60 * 1000 },
  maxAttempts: { min: 1, max: 10 },
  maxResultChars: { min: 1, max: 1024 * 1024 },
} as const;

/** A method's type, which TypeScript checks bivariantly, so that every `CustomTool<I>` is a `CustomTool` (as with `run`). */
type SideEffectsOf<I> = { decide(input: I): boolean }['decide'];

export interface CustomToolOptions<I> {
  /** 1 to 64 letters, digits, `_` or `-` (what every provider accepts), not a built-in tool's, not starting `mcp__`. */
  name: string;
  /** What the model reads to decide when and how to call the tool. */
  description: string;
  /** A zod object: the model is offered its JSON Schema, and the worker parses every call's arguments with it. */
  input: z.ZodType<I>;
  /** Whether a call may change the world: `true` runs it alone, in call order, once; a function decides per call. */
  sideEffects: boolean | SideEffectsOf<I>;
  /** Runs as a Temporal activity. A string result is sent as it is, anything else as JSON. */
  run(input: I, ctx: ToolContext): unknown;
  timeoutMs?: number;
  heartbeatTimeoutMs?: number;
  maxAttempts?: number;
  maxResultChars?: number;
}

/** A defined tool, frozen, its options filled with their defaults. */
export type CustomTool<I = unknown> = Readonly<Omit<CustomToolOptions<I>, keyof typeof CUSTOM_TOOL_DEFAULTS> & { [K in keyof typeof CUSTOM_TOOL_DEFAULTS]: number }>;

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const BUILTIN_NAMES: readonly string[] = BUILTIN_TOOLS.map((t) => t.name);

/** Defines a tool of your own; a definition that cannot work throws a {@link ToolDefinitionError} here. */
export function defineTool<I>(options: CustomToolOptions<I>): CustomTool<I> {
  const name = checkedName(options?.name);
  const refuse = (problem: string): never => {
    throw new ToolDefinitionError(`defineTool "${name}": ${problem}`);
  };
  if (typeof options.description !== 'string' || options.description.trim() === '') refuse('description: required, the text the model reads to choose the tool');
  // Duck-typed, not `instanceof`: the user's zod may be another copy than this package's.
  if ((options.input as { _zod?: { def?: { type?: unknown } } } | undefined)?._zod?.def?.type !== 'object') refuse('input: must be a zod object schema (z.object({ … })), as providers take only objects as arguments');
  if (typeof options.sideEffects !== 'boolean' && typeof options.sideEffects !== 'function') refuse('sideEffects: must be true, false or a function of the input');
  if (typeof options.run !== 'function') refuse('run: must be a function (input, ctx) => result');
  const numbers = Object.fromEntries(
    Object.entries(OPTION_BOUNDS).map(([key, { min, max }]) => {
      const value = (options as unknown as Record<string, unknown>)[key] ?? CUSTOM_TOOL_DEFAULTS[key as keyof typeof CUSTOM_TOOL_DEFAULTS];
      if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) refuse(`${key}: must be a whole number from ${min} to ${max}`);
      return [key, value];
    }),
  ) as { [K in keyof typeof CUSTOM_TOOL_DEFAULTS]: number };
  return Object.freeze({ ...options, name, ...numbers });
}

function checkedName(name: unknown): string {
  if (typeof name !== 'string' || !TOOL_NAME.test(name)) {
    const shown = typeof name === 'string' ? `"${name.slice(0, PROVIDER_TOOL_NAME_MAX + 1)}"` : 'without a name';
    throw new ToolDefinitionError(`defineTool ${shown}: name: must be 1 to ${PROVIDER_TOOL_NAME_MAX} letters, digits, _ or - (what the providers accept)`);
  }
  if (name.startsWith('mcp__')) throw new ToolDefinitionError(`defineTool "${name}": name: must not start with "mcp__", which names MCP tools`);
  if (BUILTIN_NAMES.includes(name)) throw new ToolDefinitionError(`defineTool "${name}": name: is a built-in tool's (${BUILTIN_NAMES.join(', ')})`);
  // Anthropic's structured answer comes as a call of this tool: a tool of the user's under it would be taken for the answer.
  if (name === OUTPUT_TOOL_NAME) throw new ToolDefinitionError(`defineTool "${name}": name: is reserved for structured output's answer (docs/structured-output.md)`);
  return name;
}

/**
 * The worker's tools, checked once at its start: two definitions of one name would make a
 * call's tool depend on list order. One definition listed twice (the worker's and an agent's)
 * is one tool.
 */
export function checkCustomTools(tools: readonly CustomTool[]): ReadonlyMap<string, CustomTool> {
  const byName = new Map<string, CustomTool>();
  for (const tool of tools) {
    if (typeof tool?.run !== 'function' || !Object.isFrozen(tool)) throw new ToolDefinitionError(`worker tools: "${String(tool?.name)}" is not made by defineTool`);
    const known = byName.get(tool.name);
    if (known === tool) continue;
    if (known) throw new ToolDefinitionError(`worker tools: "${tool.name}" is defined twice`);
    byName.set(tool.name, tool);
  }
  return byName;
}
