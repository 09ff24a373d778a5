import { defineQuery } from '@temporalio/workflow';
import { z } from 'zod';
import type { AssistantMessage, LlmRequest } from './messages';
import type { LimitWait, SessionPriority } from './fleet-limits';
import type { SessionRetryPolicy } from './retry-policy';

/**
 * The LLM-call activity's contract.
 *
 * The activity receives a reference to the conversation, not the conversation: it reads
 * the messages from its session by Query. Passing the transcript as activity input would
 * write the whole conversation into history at every step, so history would grow with the
 * square of the step count and a long session would hit Temporal's history limit.
 * The log is append-only, so `uptoSeq` pins exactly the conversation this call was
 * scheduled with, on every attempt and every replay, and `logDigest` proves that the copy
 * the activity read (from its worker's cache, see log-sink.ts, or by Query) is that one.
 */
export interface LlmCallInput {
  sessionId: string;
  turn: number;
  step: number;
  /** `provider:model`. */
  model: string;
  /**
   * The conversation is the log's events with `seq < uptoSeq`. Seqs are the session's
   * across runs: a run holds the events from its first seq (`state.firstSeq`) on, and
   * the conversation is derived from those (an earlier compaction among them applies).
   */
  uptoSeq: number;
  /**
   * The digest of those events, from the run's first one (log-digest.ts). Absent only in
   * calls scheduled by a worker that predates digests: those read the log by Query, unchecked.
   */
  logDigest?: string;
  /**
   * `step` (absent): the step's request. `compact`: a request for a summary of the
   * conversation (events `< uptoSeq`, the workflow passes `throughSeq + 1`), whose answer's
   * text becomes a `context/compacted` event's summary (workflows/compaction.ts).
   */
  purpose?: 'step' | 'compact';
  /**
   * A compaction's MCP tools come from the run's events `< toolsUptoSeq` (the workflow passes
   * the log's next seq): a run's copy of a tool list its tail cut off is recorded after the
   * tail, so after the cut. `logDigest` is then of those events. Absent (steps, and calls
   * scheduled before it): `uptoSeq`.
   */
  toolsUptoSeq?: number;
  /**
   * The session's `clearToolResultsAfter`: old large tool results are sent as one line
   * (conversation.ts). A compaction asked again after it overflowed sends -1: every large
   * result it holds, of the cut's own turn too.
   */
  clearToolResultsAfter?: number;
  /**
   * The policy this call retries by, the session's when it was scheduled. The activity
   * learns it only here: a `setRetryPolicy` while the call is pending reaches it through
   * the workflow, which cancels the call and schedules it again with the new policy and
   * `ladder` (workflows/llm-call-schedules.ts).
   */
  retryPolicy: SessionRetryPolicy;
  /** What earlier schedules of this same call spent of its ladder; absent on its first schedule. */
  ladder?: LadderSoFar;
  /** The session's priority under the fleet limits (docs/fleet-limits.md); absent: interactive. */
  priority?: SessionPriority;
  /**
   * Present when the call's model has a fallback after it (docs/fallback.md): the ladder
   * stops early, with stop reason `fallback`, on a failure a fallback takes once this call,
   * or its provider and model on this worker, has been failing this long.
   */
  fallbackAfterMs?: number;
}

/**
 * The ladder a call carries from one schedule to the next, so its budget and its retry
 * count go on from its first failure rather than start again. The activity answers a
 * cancel with it (in the cancellation's details); the workflow passes it to the next
 * schedule.
 */
export const LadderSoFarSchema = z
  .object({
    /** When the call's first attempt failed, on the server's clock. */
    firstFailureAt: z.number().int().nonnegative().optional(),
    /** Attempts already made, counted across schedules. */
    attempts: z.number().int().nonnegative(),
    /**
     * Wait this long before the first request: the schedule before was cancelled while
     * Temporal waited to retry it, and that wait's end went with it.
     */
    waitMs: z.number().int().nonnegative().optional(),
    /** Time spent waiting for the fleet limits since the first failure: it does not count against the budget. */
    limitWaitedMs: z.number().int().nonnegative().optional(),
  })
  .strict();
export type LadderSoFar = z.infer<typeof LadderSoFarSchema>;

export interface LlmActivities {
  callLlm(input: LlmCallInput): Promise<AssistantMessage>;
}

/**
 * What an LLM call needs besides the conversation: the system prompt, the tools and the
 * token cap. The conversation itself the activity derives from the log, read in pages.
 */
export type LlmSettings = Omit<LlmRequest, 'model' | 'messages'>;

export const llmSettingsQuery = defineQuery<LlmSettings>('llmSettings');

/** What the LLM activity heartbeats: its retry bookkeeping and the stream's progress, for `watch`. */
export interface LlmHeartbeat {
  /** Carried across attempts in heartbeat details: the retry budget is measured from it. */
  firstFailureAt?: number;
  /** Counted across the call's schedules (see `ladder`). */
  attempt: number;
  bytes: number;
  toolCalls: number;
  /** The newest streamed text, bounded. */
  textTail: string;
  textChars: number;
  /** The model's visible thinking so far, bounded like the text; absent before any (and from workers that predate it). */
  thinkingTail?: string;
  thinkingChars?: number;
  /** `compact`: the call is a compaction (absent: a step's call, and from workers that predate it). */
  purpose?: 'compact';
  /** Present while the attempt waits for a lease of the fleet limits (contracts/fleet-limits.ts). */
  waiting?: LimitWait;
  /** Time waited for the fleet limits since the first failure, excluded from the ladder's budget. */
  limitWaitedMs?: number;
}
