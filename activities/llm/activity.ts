import { ApplicationFailure, Context } from '@temporalio/activity';
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { WORKFLOW_ERROR_TYPES } from '../../contracts/errors';
import { logQuery } from '../../contracts/api';
import { conversationOf } from '../../contracts/conversation';
import { llmSettingsQuery, type LadderSoFar, type LlmActivities, type LlmCallInput, type LlmHeartbeat } from '../../contracts/llm-call';
import type { AssistantMessage } from '../../contracts/messages';
import type { LiveStreamPublisher } from '../../contracts/live-stream';
import type { SessionEvent } from '../../contracts/session-log';
import type { OutputSpec } from '../../contracts/structured-output';
import { parseModelRef, type ProviderId } from '../../contracts/model-ref';
import { withMcpToolSpecs } from '../../contracts/tools/mcp-tools';
import { LostAttemptError, toActivityFailure } from './activity-failure';
import { admitAfterLostAttempt, decideRetry, type RetryDecision } from './backoff';
import { compactionAnswer, compactionMessages } from './compaction-request';
import { LlmError, redactSecrets } from './llm-error';
import { LlmAttemptSpan } from './llm-spans';
import { LiveCall } from './live-call';
import { FleetLease } from './fleet-lease';
import { ProviderHealth } from './provider-health';
import type { FleetLimit } from '../../contracts/fleet-limits';
import { PROVIDER_STREAMS, type StreamProgress } from './providers';
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
  /** The live stream: the answer's text as it streams, the call's start and retries (live-call.ts). Absent: nothing is published. */
  live?: LiveStreamPublisher;
  /** AGENT_LIMITS_FILE's limits (docs/fleet-limits.md): a call to a provider with one waits for the provider's limiter's lease. None: nothing is asked. */
  limits?: readonly FleetLimit[];
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
  const health = new ProviderHealth();
  return {
    async callLlm(input: LlmCallInput): Promise<AssistantMessage> {
      const ctx = Context.current();
      // The attempt on the call's ladder: Temporal counts from 1 again when the workflow
      // schedules the call again for a new policy.
      const attempt = (input.ladder?.attempts ?? 0) + ctx.info.attempt;
      const { provider, model } = parseModelRef(input.model);
      const span = new LlmAttemptSpan(input.model, attempt, deps.traceContent === true);
      const live = LiveCall.of(deps.live, input, attempt);
      const prior = ctx.info.heartbeatDetails as Partial<LlmBookkeeping> | undefined;
      const now = serverClock(ctx, prior);
      const beat: LlmBookkeeping = { ...priorBookkeeping(ctx, input, prior), attempt, bytes: 0, toolCalls: 0, textTail: '', textChars: 0, ...(input.purpose === 'compact' ? { purpose: 'compact' } : {}) };
      const heartbeat = () => ctx.heartbeat(beat);
      // On a timer, not on each chunk and not at once: a first heartbeat goes to the server
      // at once, a write per call that a call shorter than the interval does not need;
      // progress for `watch` rides on the next tick. A retry does heartbeat at once, or
      // `watch` would show the failed attempt's stream as this one's.
      if (ctx.info.attempt > 1) heartbeat();
      const ticker = setInterval(heartbeat, deps.heartbeatIntervalMs ?? 2_000);

      /**
       * The ladder's word on a provider error, by the policy in the input; none for a
       * cancel or any other failure. The heartbeat before a failure is kept for the next
       * attempt: that is how the budget's start survives between attempts.
       */
      function retryDecision(error: unknown): RetryDecision | undefined {
        if (ctx.cancellationSignal.aborted || !LlmError.is(error)) return undefined;
        span.failed(error.type, redact(error.message), error.retryAfterMs);
        const failedAt = now();
        beat.firstFailureAt ??= failedAt;
        beat.failedAttempt = ctx.info.attempt;
        health.failed(input.model, error.type, failedAt);
        const decision = decideRetry({ error, policy: input.retryPolicy, attempt, firstFailureAtMs: beat.firstFailureAt, ...limitWaited(beat), ...fallbackOf(input, health, failedAt), nowMs: failedAt, random });
        if (decision.retry) {
          beat.retryAt = failedAt + decision.delayMs;
          live?.retrying(decision.delayMs, error.type);
        }
        heartbeat();
        return decision;
      }

      let lease: FleetLease | undefined;
      try {
        const run = ctx.info.workflowExecution;
        // A standalone activity execution has no session to read the conversation from.
        if (!run) throw ApplicationFailure.create({ type: WORKFLOW_ERROR_TYPES.internal, message: 'callLlm runs only as an activity of a session workflow', nonRetryable: true });
        await waitBeforeRequest(ctx, input, prior, beat, now(), random, health);
        const request = await readConversation(ctx, run, input, provider, deps.logCache);
        lease = FleetLease.of(deps.limits ?? [], {
          client: ctx.client,
          taskQueue: ctx.info.taskQueue,
          holder: `${run.workflowId}/${run.runId}/${ctx.info.activityId}`,
          attempt: ctx.info.attempt,
          provider,
          model,
          priority: input.priority ?? 'interactive',
          signal: ctx.cancellationSignal,
          onWait: (wait) => {
            beat.waiting = wait;
            heartbeat();
            live?.waiting(wait);
          },
          onGranted: (waitedMs) => {
            if (waitedMs === 0) return;
            delete beat.waiting;
            // Only a wait after the first failure falls inside the budget's time; one before it never counted.
            if (beat.firstFailureAt !== undefined) beat.limitWaitedMs = (beat.limitWaitedMs ?? 0) + waitedMs;
            heartbeat();
          },
          warn: (message) => ctx.log.warn(message),
        });
        span.sending(request.messages);
        live?.started();
        const message = await PROVIDER_STREAMS[provider]({ ...request, model }, {
          dispatcher: deps.dispatcher,
          baseUrl: deps.providers[provider].baseUrl,
          apiKey: deps.providers[provider].apiKey,
          signal: ctx.cancellationSignal,
          idleTimeoutMs: deps.streamIdleTimeoutMs,
          ...(lease ? { beforeRequest: (body: string) => lease!.acquire(body, request.maxTokens), onResponse: (_status: number, headers: IncomingHttpHeaders) => lease!.observe(headers) } : {}),
          onProgress: (p) => {
            recordProgress(beat, p);
            live?.progressed(p);
          },
        });
        await lease?.release({ usage: message.usage });
        health.answered(input.model);
        const answer = priced(input, provider, message, deps.prices ?? BUILTIN_PRICE_TABLE);
        span.answered(answer);
        return answer;
      } catch (error) {
        const failure = toActivityFailure(error, retryDecision(error), { provider, redact, cancelled: ctx.cancellationSignal.aborted, ladder: ladderSoFar(beat) });
        await lease?.release({ error });
        throw failure;
      } finally {
        clearInterval(ticker);
      }
    },
  };
}

/**
 * The conversation this call sends, read from the session's log (the worker's copy when
 * it is the one the call was scheduled with), and the tools it offers.
 */
async function readConversation(ctx: Context, run: NonNullable<Context['info']['workflowExecution']>, input: LlmCallInput, provider: ProviderId, logCache: SessionLogCache) {
  const session = ctx.client.workflow.getHandle(run.workflowId, run.runId);
  const { settings, events: read, matched } = await logCache.read(run, input.toolsUptoSeq ?? input.uptoSeq, input.logDigest, {
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
  // A summary is free text whatever the turn it is made in (before continuing as new, the
  // cut runs through the last turn's end, so that turn's spec is among its events).
  const output = input.purpose === 'compact' ? undefined : turnOutput(events, input.turn);
  return {
    ...settings,
    // The MCP tools are those recorded in the log this call was scheduled with.
    tools: withMcpToolSpecs(settings.tools, read),
    messages: input.purpose === 'compact' ? compactionMessages(conversation) : conversation,
    ...(output === undefined ? {} : { output }),
  };
}

/**
 * What the step's answer must match: the spec its turn recorded when it started, so every
 * attempt, replay and fork of the turn sends the schema the turn began with.
 */
function turnOutput(events: readonly SessionEvent[], turn: number): OutputSpec | undefined {
  const start = events.find((e) => e.type === 'turn/start' && e.turn === turn);
  return start?.type === 'turn/start' ? start.output : undefined;
}

/** The stream's progress, for the next heartbeat and `watch`. */
function recordProgress(beat: LlmBookkeeping, p: StreamProgress): void {
  beat.bytes = p.bytes;
  beat.toolCalls = p.toolCalls;
  beat.textChars = p.text.length;
  beat.textTail = p.text.slice(-TEXT_TAIL_CHARS);
  beat.thinkingChars = p.thinking.length;
  beat.thinkingTail = p.thinking.slice(-TEXT_TAIL_CHARS);
}

/** Priced here, where the worker's table is: the workflow records what the call cost. */
function priced(input: LlmCallInput, provider: ProviderId, message: AssistantMessage, prices: PriceTable): AssistantMessage {
  const answer = input.purpose === 'compact' ? compactionAnswer(message, provider) : message;
  return { ...answer, costUsd: costOf(prices, input.model, answer.usage) };
}

/**
 * What the activity carries between attempts in its heartbeat details, besides progress:
 * `failedAttempt` is Temporal's number of the attempt that left through the ladder. A
 * retry whose predecessor is not that one was scheduled by Temporal after a lost attempt.
 */
type LlmBookkeeping = LlmHeartbeat & { failedAttempt?: number; retryAt?: number };

function priorBookkeeping(ctx: Context, input: LlmCallInput, prior: Partial<LlmBookkeeping> | undefined): Pick<LlmBookkeeping, 'firstFailureAt' | 'limitWaitedMs'> {
  return { ...priorFirstFailure(ctx, input, prior), ...priorLimitWait(input, prior) };
}

/** The time waited for the fleet limits since the first failure, from the attempt before or the schedule before. */
function priorLimitWait(input: LlmCallInput, prior: Partial<LlmBookkeeping> | undefined): Pick<LlmBookkeeping, 'limitWaitedMs'> {
  const waited = typeof prior?.limitWaitedMs === 'number' ? prior.limitWaitedMs : input.ladder?.limitWaitedMs;
  return waited === undefined ? {} : { limitWaitedMs: waited };
}

/** The call's fallback time and its model's health on this worker, as the ladder's functions take them (docs/fallback.md). */
function fallbackOf(input: LlmCallInput, health: ProviderHealth, nowMs: number): { fallbackAfterMs?: number; providerFailingSinceMs?: number } {
  if (input.fallbackAfterMs === undefined) return {};
  const since = health.failingSinceMs(input.model, nowMs);
  return { fallbackAfterMs: input.fallbackAfterMs, ...(since === undefined ? {} : { providerFailingSinceMs: since }) };
}

/** The budget's pause for the fleet limits, as the ladder's functions take it. */
function limitWaited(beat: LlmBookkeeping): { limitWaitedMs?: number } {
  return beat.limitWaitedMs === undefined ? {} : { limitWaitedMs: beat.limitWaitedMs };
}

function priorFirstFailure(ctx: Context, input: LlmCallInput, prior: Partial<LlmBookkeeping> | undefined): Pick<LlmBookkeeping, 'firstFailureAt'> {
  if (typeof prior?.firstFailureAt === 'number') return { firstFailureAt: prior.firstFailureAt };
  if (input.ladder?.firstFailureAt !== undefined) return { firstFailureAt: input.ladder.firstFailureAt };
  // A retry without the bookkeeping (a worker died before its last heartbeat) measures the
  // budget from the first schedule: no later than the first failure, so it may stop early
  // but never waits past the budget.
  return ctx.info.attempt > 1 ? { firstFailureAt: ctx.info.scheduledTimestampMs } : {};
}

/** What this call has spent of its ladder, for the schedule after a cancel: this attempt made no request that failed. */
function ladderSoFar(beat: LlmBookkeeping): LadderSoFar {
  return { attempts: beat.attempt - 1, ...(beat.firstFailureAt === undefined ? {} : { firstFailureAt: beat.firstFailureAt }), ...limitWaited(beat) };
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
 * What an attempt waits before its request, heartbeating (the ticker runs) and
 * cancellable: a cancel during it leaves as a cancel, before any request.
 * - The first attempt of a call scheduled again while Temporal waited to retry it waits
 *   what the workflow carried (`ladder.waitMs`): that wait's end went with the cancel.
 * - A retry Temporal scheduled after an attempt that was lost (worker gone, heartbeat
 *   timeout) is admitted by the ladder first: Temporal waited on its fallback policy, which
 *   knows neither the budget nor the count, only the jitter's floor; the random rest of the
 *   rung is waited here.
 */
async function waitBeforeRequest(ctx: Context, input: LlmCallInput, prior: Partial<LlmBookkeeping> | undefined, beat: LlmBookkeeping, nowMs: number, random: () => number, health: ProviderHealth): Promise<void> {
  if (ctx.info.attempt === 1) return sleep(ctx, input.ladder?.waitMs ?? 0);
  if (prior?.failedAttempt === ctx.info.attempt - 1) return;
  const firstFailureAtMs = beat.firstFailureAt ?? ctx.info.scheduledTimestampMs;
  beat.firstFailureAt = firstFailureAtMs;
  const admission = admitAfterLostAttempt({ policy: input.retryPolicy, attempt: beat.attempt, firstFailureAtMs, ...limitWaited(beat), ...fallbackOf(input, health, nowMs), nowMs, random });
  if (!admission.admit) throw new LostAttemptError(beat.attempt - 1, admission.reason);
  await sleep(ctx, admission.waitMs);
}

/** `ctx.sleep` rejects when the call is cancelled; the failure path turns that into the call's cancel. */
async function sleep(ctx: Context, ms: number): Promise<void> {
  if (ms > 0) await ctx.sleep(ms);
}

