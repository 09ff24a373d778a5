import { z } from 'zod';
import { SessionEventSchema } from './session-log';

/**
 * The live stream: what a worker tells a gateway about its sessions as it happens, outside
 * Temporal. Nothing of it is written to workflow history or costs a billable action: the
 * LLM activity publishes the model's text as it streams, the worker publishes what its
 * sessions append to their logs (mirrored through the log sink) and their status.
 *
 * It is best effort by design. A frame can be lost (no gateway listening, a broker
 * restarting, a slow subscriber); the log, read from Temporal, is the truth. A subscriber
 * that sees a gap in a session's log seqs, or a `hello` from a publisher that reconnected,
 * reads the log again from the last seq it delivered.
 *
 * Worker and gateway both name the frames here, so neither imports the other.
 */
export const LIVE_STREAM_VERSION = 1;

const sessionRef = { v: z.literal(LIVE_STREAM_VERSION), sessionId: z.string().min(1) };

/** The model's text (or thinking) of one attempt of one step, `offset` characters in. */
export const DeltaFrameSchema = z.object({
  kind: z.literal('delta'),
  ...sessionRef,
  turn: z.number().int().positive(),
  step: z.number().int().positive(),
  /** The attempt on the call's ladder: a retry streams its text again from offset 0. */
  attempt: z.number().int().positive(),
  channel: z.enum(['text', 'thinking']),
  offset: z.number().int().nonnegative(),
  text: z.string(),
});
export type DeltaFrame = z.infer<typeof DeltaFrameSchema>;

/** Events a session appended to its log, in seq order (the sink's `appended`/`opened`). */
export const LogFrameSchema = z.object({
  kind: z.literal('log'),
  ...sessionRef,
  events: z.array(SessionEventSchema),
});
export type LogFrame = z.infer<typeof LogFrameSchema>;

/**
 * What a person following the session wants to see now that is not a log event: an LLM
 * call waiting to retry, a call waiting for approval, spend against the budget. `line` is
 * the human sentence (`retrying in 12 s (attempt 3/11): overloaded`).
 */
export const ProgressFrameSchema = z.object({
  kind: z.literal('progress'),
  ...sessionRef,
  turn: z.number().int().nonnegative(),
  step: z.number().int().nonnegative(),
  state: z.enum(['llm_started', 'llm_retrying', 'llm_waiting', 'approval_waiting', 'approval_decided', 'budget', 'turn_idle']),
  line: z.string(),
  attempt: z.number().int().positive().optional(),
  maxAttempts: z.number().int().positive().optional(),
  retryInMs: z.number().nonnegative().optional(),
  failureType: z.string().optional(),
  callId: z.string().optional(),
  toolName: z.string().optional(),
  /** How a call's wait ended, when `state` is `approval_decided`. */
  outcome: z.enum(['approved', 'denied', 'timed_out']).optional(),
  /** Spend and limits, when `state` is `budget` or the turn went idle. */
  spend: z.object({ costUsd: z.number().nullable(), inputTokens: z.number(), outputTokens: z.number() }).optional(),
  budget: z.object({ maxUsd: z.number().nullable().optional(), maxTokens: z.number().nullable().optional(), warnAt: z.number().optional() }).optional(),
});
export type ProgressFrame = z.infer<typeof ProgressFrameSchema>;

/** A publisher (re)connected: frames it published while it was away are lost, so read the logs again. */
export const HelloFrameSchema = z.object({ kind: z.literal('hello'), v: z.literal(LIVE_STREAM_VERSION), publisherId: z.string().min(1) });
export type HelloFrame = z.infer<typeof HelloFrameSchema>;

export const LiveFrameSchema = z.discriminatedUnion('kind', [DeltaFrameSchema, LogFrameSchema, ProgressFrameSchema, HelloFrameSchema]);
export type LiveFrame = z.infer<typeof LiveFrameSchema>;
export type SessionFrame = Exclude<LiveFrame, HelloFrame>;

/**
 * The worker's side. `publish` never throws and never waits: a frame that cannot go out
 * now (no connection, a full buffer) is dropped, as the stream is best effort.
 */
export interface LiveStreamPublisher {
  publish(frame: LiveFrame): void;
  close(): Promise<void>;
}

/** The gateway's side: frames of one session, and word of the connection itself. */
export interface LiveStreamSubscriber {
  /** Frames of `sessionId` as they arrive; returns the unsubscribe. */
  subscribe(sessionId: string, onFrame: (frame: SessionFrame) => void): () => void;
  /** A publisher reconnected (`hello`), or this subscriber itself reconnected: frames may have been lost. */
  onResync(listener: () => void): () => void;
  /** False while the subscriber has no connection (the broker is down): followers read the log from Temporal instead. */
  readonly connected: boolean;
  onConnectionChange(listener: (connected: boolean) => void): () => void;
  close(): Promise<void>;
}
