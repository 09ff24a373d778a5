import { z } from 'zod';
import { MAX_EVENT_LIST_ENTRIES } from '../messages';
import type { ToolClass } from './tool-definition';
import type { ToolOutcome } from './tool-outcome';

/**
 * What a session learns of its custom tools, and records in its log: the worker lists them
 * once (`listCustomTools`), the session writes the offer into its `tools/listed` event
 * (`custom`), and from then on offers and dispatches by the log only. So a deploy that
 * changes a tool's schema or lane never changes what a running session replays, retries or
 * forks; `refreshTools` lists again.
 */

/** A custom tool's name as a session's input names it (contracts/tools/custom-tool.ts checks the same at `defineTool`). */
export const CustomToolNameSchema = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, { error: 'a custom tool name has 1 to 64 letters, digits, _ or -' });

/**
 * `by_input`: the tool's `sideEffects` is a function, which only the worker can run; the
 * session asks the worker for the lanes of a step's calls (a local activity, recorded in
 * history) before it schedules them.
 */
export const CustomToolLaneSchema = z.enum(['read_only', 'side_effecting', 'by_input']);
export type CustomToolLane = z.infer<typeof CustomToolLaneSchema>;

export const CustomToolOfferSchema = z.object({
  name: CustomToolNameSchema,
  description: z.string(),
  /** The JSON Schema of the tool's zod input, as the model writes it. */
  inputSchema: z.record(z.string(), z.unknown()),
  lane: CustomToolLaneSchema,
  timeoutMs: z.number().int().positive(),
  heartbeatTimeoutMs: z.number().int().positive(),
  /** Attempts of a read-only call. */
  maxAttempts: z.number().int().positive(),
});
export type CustomToolOffer = z.infer<typeof CustomToolOfferSchema>;

export const CustomToolOffersSchema = z.array(CustomToolOfferSchema).max(MAX_EVENT_LIST_ENTRIES);

/** How much JSON a call's arguments may be in the workflow; the tool's own schema is the worker's to check. */
export const CUSTOM_TOOL_ARGUMENTS_MAX_CHARS = 256 * 1024;

export interface ListCustomToolsRequest {
  names: string[];
}

export interface RunCustomToolRequest {
  name: string;
  /** The session's workflow id. */
  sessionId: string;
  input: Record<string, unknown>;
  callId: string;
  turn: number;
  step: number;
  idempotencyKey: string;
  /** The lane the session runs the call in: the worker refuses a read-only call of a tool it now takes for side-effecting. */
  lane: ToolClass;
}

export interface DecideCustomToolLanesRequest {
  calls: { name: string; input: unknown }[];
}

/** Per call: its lane, or the error result the model reads when its arguments are refused. */
export type CustomToolLaneDecision = { lane: ToolClass } | { invalid: string };

/** The custom tools' activities, for `proxyActivities` in the workflow. */
export interface CustomToolActivities {
  listCustomTools(request: ListCustomToolsRequest): Promise<CustomToolOffer[]>;
  runCustomTool(request: RunCustomToolRequest): Promise<ToolOutcome>;
  decideCustomToolLanes(request: DecideCustomToolLanesRequest): Promise<CustomToolLaneDecision[]>;
}

/** The custom offer of the newest `tools/listed` among `events`, if it has one. */
export function latestCustomToolOffer(events: readonly { type: string }[]): CustomToolOffer[] | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as { type: string; custom?: CustomToolOffer[] };
    if (e.type === 'tools/listed') return e.custom;
  }
  return undefined;
}
