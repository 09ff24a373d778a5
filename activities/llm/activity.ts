import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { Dispatcher } from 'undici';
import { WORKFLOW_ERROR_TYPES, type LlmErrorType, type LlmFailureDetails } from '../../contracts/errors';
import { logQuery } from '../../contracts/api';
import { conversationOf } from '../../contracts/conversation';
import { llmSettingsQuery, retryPolicyQuery, type LlmActivities, type LlmCallInput, type LlmHeartbeat } from '../../contracts/llm-call';
import type { AssistantMessage } from '../../contracts/messages';
import { parseModelRef, type ProviderId } from '../../contracts/model-ref';
import type { SessionRetryPolicy } from '../../contracts/retry-policy';
import { withMcpToolSpecs } from '../../contracts/tools/mcp-tools';
import { isAbortError } from './abort-error';
import { admitAfterLostAttempt, decideRetry } from './backoff';
import { compactionAnswer, compactionMessages } from './compaction-request';
import { LlmError, redactSecrets } from './llm-error';
import { LlmAttemptSpan } from './llm-spans';
import { PROVIDER_STREAMS } from './providers';
import { BUILTIN_PRICE_TABLE, costOf, type PriceTable } from './price-table';
import type { SessionLogCache } from './session-log-cache';

export interface ProviderEndpoint {
  baseUrl: string;
  /** Read by the worker from its environment; never in any input, output, log or failure. */
  apiKey: string | undefined;
}

export interface LlmActivityDeps {
  dispatcher: Dispatcher;
  providers: Record<ProviderId, ProviderEndpoint>;
  /** A response body silent for this long is a dead socket. Pings are bytes, so they keep it alive. */
  streamIdleTimeoutMs: number;
  /**
   * How often the activity heartbeats, streaming or silent, so a cancellation (delivered
   * only in a heartbeat's response) reaches a stalled stream promptly, and `watch` sees
   * the stream's progress.
   */
  heartbeatIntervalMs?: number;
  random?: () => number;
  /** The worker's copy of its sessions' logs; what it cannot answer is read by Query. */
  logCache: SessionLogCache;
  /** USD per million tokens by `provider:model` (AGENT_PRICES_FILE over the built-in table); the built-in table when absent. */
  prices?: PriceTable;
  /** `AGENT_TRACE_CONTENT=true`: the attempt's span also carries the messages sent and the answer. */
  traceContent?: boolean;
}

/** The newest text kept in heartbeat details for `watch`: enough to follow, bounded in size. */
const TEXT_TAIL_CHARS = 2_000;

/**
 * The LLM-call activity: one attempt per invocation. Temporal does the retrying; this
 * steers it. A retryable failure leaves with `nextRetryDelay` from the ladder (jitter,
 * server-stated floors); one that must not be retried leaves as a non-retryable failure of
 * the same `type`, so the UI and the client see why it stopped.
 */
export function createLlmActivities(deps: LlmActivityDeps): LlmActivities {
  const random = deps.random ?? Math.random;
  // Every configured key, not only the call's own: a message of any provider's call goes
  // to history, the worker's log, spans and the client, and none of them may carry a key
  // in any shape, the patterns of `redactSecrets` known or not.
  const keys = Object.values(deps.providers).flatMap((p) => (p.apiKey === undefined ? [] : [p.apiKey]));
  const redact = (text: string) => redactSecrets(text, keys);
  return {
    async callLlm(input: LlmCallInput): Promise<AssistantMessage> {
      const ctx = Context.current();
      const { attempt } = ctx.info;
      const { provider, model } = parseModelRef(input.model);
      const span = new LlmAttemptSpan(input.model, attempt, deps.traceContent === true);
      const endpoint = deps.providers[provider];
      const prior = ctx.info.heartbeatDetails as Partial<LlmBookkeeping> | undefined;
      const now = serverClock(ctx, prior);
      const beat: LlmBookkeeping = { ...priorBookkeeping(ctx, prior), attempt, bytes: 0, toolCalls: 0, textTail: '', textChars: 0, ...(input.purpose === 'compact' ? { purpose: 'compact' } : {}) };
      const heartbeat = () => ctx.heartbeat(beat);
      // On a timer, not on each chunk and not at once: a first heartbeat goes to the server
      // at once, a write per call that a call shorter than the interval does not need;
      // progress for `watch` rides on the next tick. A retry does heartbeat at once, or
      // `watch` would show the failed attempt's stream as this one's.
      if (attempt > 1) heartbeat();
      const ticker = setInterval(heartbeat, deps.heartbeatIntervalMs ?? 2_000);
      try {
        const run = ctx.info.workflowExecution;
        // A standalone activity execution has no session to read the conversation from.
        if (!run) throw ApplicationFailure.create({ type: WORKFLOW_ERROR_TYPES.internal, message: 'callLlm runs only as an activity of a session workflow', nonRetryable: true });
        if (attempt > 1 && prior?.failedAttempt !== attempt - 1) await admitRetryOfLostAttempt(ctx, input, beat, now(), random);
        const session = ctx.client.workflow.getHandle(run.workflowId, run.runId);
        const { settings, events: read, matched } = await deps.logCache.read(run, input.toolsUptoSeq ?? input.uptoSeq, input.logDigest, {
          settings: () => session.query(llmSettingsQuery),
          page: (fromSeq) => session.query(logQuery, { fromSeq }),
        });
        if (!matched) {
          ctx.log.warn("the session's log differs from the one this LLM call was scheduled with (its code now writes some event differently); sending the session's current log", {
            uptoSeq: input.uptoSeq,
            logDigest: input.logDigest,
          });
        }
        // A compaction reads the run's whole log for its MCP tools, its conversation only to the cut.
        const events = input.toolsUptoSeq === undefined ? read : read.filter((e) => e.seq < input.uptoSeq);
        const conversation = conversationOf(events, provider, {
          currentTurn: input.turn,
          ...(input.clearToolResultsAfter === undefined ? {} : { clearToolResultsAfter: input.clearToolResultsAfter }),
        });
        const compacting = input.purpose === 'compact';
        const messages = compacting ? compactionMessages(conversation) : conversation;
        span.sending(messages);
        // The MCP tools are those recorded in the log this call was scheduled with.
        const message = await PROVIDER_STREAMS[provider]({ ...settings, tools: withMcpToolSpecs(settings.tools, read), messages, model }, {
          dispatcher: deps.dispatcher,
          baseUrl: endpoint.baseUrl,
          apiKey: endpoint.apiKey,
          signal: ctx.cancellationSignal,
          idleTimeoutMs: deps.streamIdleTimeoutMs,
          onProgress: (p) => {
            beat.bytes = p.bytes;
            beat.toolCalls = p.toolCalls;
            beat.textChars = p.text.length;
            beat.textTail = p.text.slice(-TEXT_TAIL_CHARS);
            beat.thinkingChars = p.thinking.length;
            beat.thinkingTail = p.thinking.slice(-TEXT_TAIL_CHARS);
          },
        });
        const answer = compacting ? compactionAnswer(message, provider) : message;
        // Priced here, where the worker's table is: the workflow records what the call cost.
        const priced = { ...answer, costUsd: costOf(deps.prices ?? BUILTIN_PRICE_TABLE, input.model, answer.usage) };
        span.answered(priced);
        return priced;
      } catch (error) {
        // Cancellation first: an aborted request surfaces as some error, and none of them
        // may be reported, or retried, as a network failure.
        if (ctx.cancellationSignal.aborted || isAbortError(error)) throw new CancelledFailure('the LLM call was cancelled');
        if (!LlmError.is(error)) throw unclassified(error, provider, redact);
        const message = redact(error.message);
        span.failed(error.type, message, error.retryAfterMs);
        const failedAt = now();
        beat.firstFailureAt ??= failedAt;
        beat.failedAttempt = attempt;
        // The last heartbeat before a failure is kept for the next attempt: that is how
        // the budget's start survives between attempts.
        heartbeat();
        const policy = await livePolicy(ctx, input);
        // The Query is an await: a cancel that arrived meanwhile is still a cancel, never a
        // provider failure to retry or to record as the turn's failure.
        if (ctx.cancellationSignal.aborted) throw new CancelledFailure('the LLM call was cancelled');
        const decision = decideRetry({ error, policy, attempt, firstFailureAtMs: beat.firstFailureAt, nowMs: failedAt, random });
        const details: LlmFailureDetails = {
          provider,
          ...(error.status === undefined ? {} : { status: error.status }),
          ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
          ...(decision.retry ? {} : { stopReason: decision.reason }),
        };
        if (decision.retry) {
          beat.retryAt = failedAt + decision.delayMs;
          heartbeat();
          throw ApplicationFailure.create({ type: error.type, message, details: [details], nextRetryDelay: decision.delayMs });
        }
        throw ApplicationFailure.create({
          type: error.type,
          message: decision.reason === 'not_retryable' ? message : `${message} (not retried: ${decision.reason})`,
          details: [details],
          nonRetryable: true,
        });
      } finally {
        clearInterval(ticker);
      }
    },
  };
}

/**
 * What the activity carries between attempts in its heartbeat details, besides progress:
 * `failedAttempt` is the attempt that left through the ladder below. A retry whose
 * predecessor is not that one was scheduled by Temporal after a lost attempt.
 */
type LlmBookkeeping = LlmHeartbeat & { failedAttempt?: number; retryAt?: number };

function priorBookkeeping(ctx: Context, prior: Partial<LlmBookkeeping> | undefined): Pick<LlmBookkeeping, 'firstFailureAt'> {
  if (typeof prior?.firstFailureAt === 'number') return { firstFailureAt: prior.firstFailureAt };
  // A retry without the bookkeeping (a worker died before its last heartbeat) measures the
  // budget from the first schedule: no later than the first failure, so it may stop early
  // but never waits past the budget.
  return ctx.info.attempt > 1 ? { firstFailureAt: ctx.info.scheduledTimestampMs } : {};
}

/**
 * Now, on the Temporal server's clock: when this attempt became due (the server's
 * schedule time for it, or the end of the wait the previous attempt asked for, whichever
 * is later: the test server stamps a retry with the time it was decided), plus the time
 * since it started here. The budget is measured between failures of different attempts,
 * possibly on different workers, so it is read from one clock, the one that also times
 * the waits (and skips them in a time-skipping test server).
 */
function serverClock(ctx: Context, prior: Partial<LlmBookkeeping> | undefined): () => number {
  const startedAt = Date.now();
  const dueAt = Math.max(ctx.info.currentAttemptScheduledTimestampMs, prior?.failedAttempt === ctx.info.attempt - 1 ? (prior.retryAt ?? 0) : 0);
  return () => dueAt + (Date.now() - startedAt);
}

/**
 * A retry Temporal scheduled after an attempt that was lost (worker gone, heartbeat
 * timeout): Temporal waited on its fallback policy, which knows neither the live policy
 * nor the budget, so the ladder decides here whether this attempt may go out at all.
 * Temporal's wait was only the jitter's floor; the random rest of the rung is waited
 * here, heartbeating (the ticker runs) and cancellable: a cancel during it leaves as a
 * cancel, before any request.
 */
async function admitRetryOfLostAttempt(ctx: Context, input: LlmCallInput, beat: LlmBookkeeping, nowMs: number, random: () => number): Promise<void> {
  const firstFailureAtMs = beat.firstFailureAt ?? ctx.info.scheduledTimestampMs;
  beat.firstFailureAt = firstFailureAtMs;
  const policy = await livePolicy(ctx, input);
  if (ctx.cancellationSignal.aborted) throw new CancelledFailure('the LLM call was cancelled');
  const admission = admitAfterLostAttempt({ policy, scheduledPolicy: input.retryPolicy, attempt: ctx.info.attempt, firstFailureAtMs, nowMs, random });
  if (admission.admit) {
    if (admission.waitMs > 0) await ctx.sleep(admission.waitMs);
    return;
  }
  const details: LlmFailureDetails = { provider: parseModelRef(input.model).provider, stopReason: admission.reason };
  throw ApplicationFailure.create({
    type: LOST_ATTEMPT_TYPE,
    message: `attempt ${ctx.info.attempt - 1} was lost (its worker stopped, or it went silent past the heartbeat timeout) (not retried: ${admission.reason})`,
    details: [details],
    nonRetryable: true,
  });
}

/** A lost attempt is a connection that went silent, from the ladder's point of view. */
const LOST_ATTEMPT_TYPE: LlmErrorType = 'network_error';

const UNCLASSIFIED_TYPE: LlmErrorType = 'unknown';

/**
 * A failure that is not a classified provider error: a bug, a failed Query for the log.
 * Our own typed failures (and cancellation) pass as they are; anything else is `unknown`,
 * which is never retried: Temporal's fallback policy would retry it without jitter,
 * budget or the live policy.
 */
function unclassified(error: unknown, provider: ProviderId, redact: (text: string) => string): unknown {
  if (error instanceof ApplicationFailure || error instanceof CancelledFailure) return error;
  const message = redact(error instanceof Error ? error.message : String(error));
  const details: LlmFailureDetails = { provider, stopReason: 'not_retryable' };
  return ApplicationFailure.create({ type: UNCLASSIFIED_TYPE, message: `unexpected failure of the LLM call: ${message}`, details: [details], nonRetryable: true, cause: error instanceof Error ? redactedCause(error, redact) : undefined });
}

/** The cause goes to history with its message and stack: the error itself when neither carries a key, else a masked copy. */
function redactedCause(error: Error, redact: (text: string) => string): Error {
  const message = redact(error.message);
  const stack = error.stack === undefined ? undefined : redact(error.stack);
  if (message === error.message && stack === error.stack) return error;
  const copy = new Error(message);
  copy.name = error.name;
  copy.stack = stack;
  return copy;
}

/**
 * The session's policy now, so `retry-policy off` applies to the next failure even of a
 * call that is already retrying. The policy the call was scheduled with is the fallback
 * when the session cannot answer (its worker busy or gone).
 */
async function livePolicy(ctx: Context, input: LlmCallInput): Promise<SessionRetryPolicy> {
  try {
    return await ctx.client.workflow.getHandle(input.sessionId).query(retryPolicyQuery);
  } catch {
    return input.retryPolicy;
  }
}
