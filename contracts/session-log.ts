import { z } from 'zod';
import { EMPTY_LOG_DIGEST, extendLogDigest } from './log-digest';
import { AssistantMessageSchema, MAX_EVENT_LIST_ENTRIES, ToolResultCodeSchema, UsageSchema } from './messages';
import { CustomToolOffersSchema } from './tools/custom-tool-offer';
import { McpToolListSchema } from './tools/mcp-tools';
import { OutputSpecSchema } from './structured-output';
import { SpendSchema } from './spend';
import { SubAgentOffersSchema } from './sub-agents';
import { HandedOffToSchema } from './handoffs';

/**
 * The session log: append-only, typed, the single source of truth of a session. The
 * conversation sent to a provider is derived from it (see conversation.ts) and never
 * kept beside it, so the two cannot disagree.
 */

export const FailureSummarySchema = z.object({ type: z.string(), message: z.string() });
export type FailureSummary = z.infer<typeof FailureSummarySchema>;

/** `interrupted` is written only by crash-tail repair: the step did not fail, its worker or its session did. */
export const EndStatusSchema = z.enum(['completed', 'failed', 'cancelled', 'interrupted']);

const at = { seq: z.number().int().nonnegative(), at: z.number() };
const turnRef = { turn: z.number().int().positive() };
const stepRef = { ...turnRef, step: z.number().int().positive() };

/** Built on first use, like the assistant message's (see messages.ts): only a log carried into a run is parsed with it. */
export const SessionEventSchema = z.lazy(() =>
  z.discriminatedUnion('type', [
    /** `output`: what the turn's answer must match (the message's schema, else the session's); absent: free text. */
    z.object({ type: z.literal('turn/start'), ...at, ...turnRef, text: z.string(), output: OutputSpecSchema.optional() }),
    z.object({
      type: z.literal('turn/end'),
      ...at,
      ...turnRef,
      status: EndStatusSchema,
      /** Why a completed turn stopped: the model answered, the step limit was reached, or it handed the conversation over. */
      reason: z.enum(['answered', 'step_limit', 'handoff']).optional(),
      failure: FailureSummarySchema.optional(),
      /** A turn with an output schema that completed `answered`: the answer's value, valid against it. */
      output: z.unknown().optional(),
    }),
    z.object({ type: z.literal('step/start'), ...at, ...stepRef, model: z.string() }),
    /**
     * The session's model changed (docs/fallback.md). `fallback`: the step's call to `from`
     * failed with `failure` on a failure a fallback takes (recorded inside the step, before
     * its call to `to`). `return`: back to the first model, at a turn's start or after
     * `fallbackReturnAfterMs` (recorded before the step/start that uses it).
     */
    z.object({ type: z.literal('model/switched'), ...at, ...stepRef, from: z.string(), to: z.string(), why: z.enum(['fallback', 'return']), failure: FailureSummarySchema.optional() }),
    z.object({ type: z.literal('step/end'), ...at, ...stepRef, status: EndStatusSchema, failure: FailureSummarySchema.optional() }),
    z.object({ type: z.literal('assistant'), ...at, ...stepRef, message: AssistantMessageSchema }),
    /**
     * The step's answer did not match the turn's output schema: `errors` (bounded, see
     * OUTPUT_ERRORS) are sent to the model as the next user message, asking it to answer
     * again. Recorded after the step's `step/end`, before the next step's `step/start`.
     */
    z.object({ type: z.literal('output/rejected'), ...at, ...stepRef, errors: z.array(z.string()).max(MAX_EVENT_LIST_ENTRIES) }),
    /**
     * The session handed its conversation over (contracts/handoffs.ts): `to` has it from now on
     * and answers the user's message of `turn` there. Recorded after the step of the call, before
     * the turn's `turn/end`; the session ends right after.
     */
    z.object({ type: z.literal('session/handed-off'), ...at, ...stepRef, to: HandedOffToSchema, reason: z.string().optional() }),
    /** Recorded just before dispatch: it proves the call may have started, never that it ran. */
    z.object({
      type: z.literal('tool/call'),
      ...at,
      ...stepRef,
      callId: z.string(),
      name: z.string(),
      input: z.record(z.string(), z.unknown()),
      /** A sub-agent's call: the child session it starts (contracts/sub-agents.ts). */
      child: z.object({ workflowId: z.string(), agent: z.string() }).optional(),
    }),
    z.object({
      type: z.literal('tool/result'),
      ...at,
      ...stepRef,
      callId: z.string(),
      name: z.string(),
      code: ToolResultCodeSchema,
      content: z.string(),
      /**
       * A sub-agent's call: what its child session spent (counted in this session's spend, as
       * an LLM call's is) and, when the child's turn failed, its failure as the child had it.
       */
      spend: SpendSchema.optional(),
      failure: FailureSummarySchema.optional(),
    }),
    /**
     * The MCP tools offered from here on, as the servers listed them (contracts/tools/mcp-tools.ts).
     * `turn` is the turn it was recorded in, or the last one before it (0: before any).
     * `custom`: the custom tools the session is offered, as the worker listed them
     * (contracts/tools/custom-tool-offer.ts); absent in a session offered none. `agents`: the
     * sub-agents it offers as tools (contracts/sub-agents.ts), likewise.
     */
    z.object({ type: z.literal('tools/listed'), ...at, turn: z.number().int().nonnegative(), ...McpToolListSchema.shape, custom: CustomToolOffersSchema.optional(), agents: SubAgentOffersSchema.optional() }),
    /**
     * What the provider is sent from here on starts with `summary` in place of every event up
     * to `throughSeq` (a `turn/end`), see conversation.ts. The log itself keeps them all.
     * `turn` is the turn running when it was recorded, or the last one between turns;
     * the token counts are estimates of the request before and after (workflows/compaction.ts).
     */
    z.object({
      type: z.literal('context/compacted'),
      ...at,
      turn: z.number().int().nonnegative(),
      throughSeq: z.number().int().nonnegative(),
      summary: z.string(),
      tokensBefore: z.number().int().nonnegative(),
      tokensAfter: z.number().int().nonnegative(),
      /** What the compaction call itself used and cost: it counts toward the session's spend like any call. */
      usage: UsageSchema.optional(),
      costUsd: z.number().nonnegative().nullable().optional(),
    }),
  ]),
);
export type SessionEvent = z.infer<typeof SessionEventSchema>;
/**
 * A carried log (continue-as-new, fork) is parsed event by event and refused at its first
 * bad event. Parsed whole, a 2 MB log of wrong entries is a million issues: seconds of work
 * in a workflow task that has 5 s, retried for ever. The first bad event is what its sender
 * needs to see anyway.
 */
export const SessionLogSchema = z.array(z.unknown()).transform((events, ctx): SessionEvent[] => {
  const parsed: SessionEvent[] = [];
  for (const [i, event] of events.entries()) {
    const result = SessionEventSchema.safeParse(event);
    if (!result.success) {
      for (const issue of result.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: [i, ...issue.path] });
      return z.NEVER;
    }
    parsed.push(result.data);
  }
  return parsed;
});

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type NewSessionEvent = DistributiveOmit<SessionEvent, 'seq' | 'at'>;

/**
 * An append-only log. The workflow holds one; fork and repair build new ones from old events.
 *
 * Seqs are the session's, across runs: a run that continued as new holds only the tail of
 * its log (the events after the last compaction), so its first event keeps the seq it had.
 * The events given are numbered on from the first one's seq, so they are contiguous even if
 * a caller cut them badly. A new session, and every run recorded before, starts at 0.
 */
export class SessionLog {
  readonly #events: SessionEvent[];
  readonly #firstSeq: number;
  /** The digest after each event: a compaction call is scheduled with the digest of a prefix. */
  readonly #digests: string[] = [];

  constructor(events: readonly SessionEvent[] = []) {
    this.#firstSeq = events[0]?.seq ?? 0;
    this.#events = [];
    for (const [i, e] of events.entries()) this.#push({ ...e, seq: this.#firstSeq + i });
  }

  append(event: NewSessionEvent, now: number): SessionEvent {
    const full = { ...event, seq: this.nextSeq, at: now } as SessionEvent;
    this.#push(full);
    return full;
  }

  #push(event: SessionEvent): void {
    this.#events.push(event);
    this.#digests.push(extendLogDigest(this.digest, event));
  }

  get events(): readonly SessionEvent[] {
    return this.#events;
  }

  get length(): number {
    return this.#events.length;
  }

  /** The seq of this run's first event: earlier ones are in the runs before it. */
  get firstSeq(): number {
    return this.#firstSeq;
  }

  /** The seq the next event gets: the session's event count, all runs together. */
  get nextSeq(): number {
    return this.#firstSeq + this.#events.length;
  }

  /** The event with this seq, if this run holds it. */
  at(seq: number): SessionEvent | undefined {
    return this.#events[seq - this.#firstSeq];
  }

  /** The digest of every event this run holds (log-digest.ts): from `firstSeq` on. */
  get digest(): string {
    return this.#digests[this.#digests.length - 1] ?? EMPTY_LOG_DIGEST;
  }

  /** The digest of this run's events up to and including `seq`. */
  digestThrough(seq: number): string {
    return this.#digests[seq - this.#firstSeq] ?? EMPTY_LOG_DIGEST;
  }
}
