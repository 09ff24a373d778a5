/**
 * How the LLM activity leaves when something other than a classified provider error
 * happens, and how it keeps its ladder across the schedules of one call: a cancel (it
 * carries what the call spent of its ladder), a failure that is not a provider error at
 * all, a retry after a lost attempt, a call scheduled again for a new policy, a call with a
 * fallback while its model has been failing on the worker (provider-health.ts). Unit level:
 * the activity runs in MockActivityEnvironment against the real scripted LLM over HTTP,
 * the session's log held in the worker's copy; it learns its policy only from its input.
 */
import type { Client } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { createLlmActivities, type LlmActivityDeps } from '../activities/llm/activity';
import { SessionLogCache } from '../activities/llm/session-log-cache';
import type { LlmCallInput } from '../contracts/llm-call';
import type { AssistantMessage } from '../contracts/messages';
import { DEFAULT_RETRY_POLICY } from '../contracts/retry-policy';
import { SessionLog } from '../contracts/session-log';
import { useScriptedLlmEndpoint } from './support/scripted-llm-endpoint';

const { llm, dispatcher } = useScriptedLlmEndpoint();

const run = { workflowId: 'session-unit', runId: 'run-unit' };

/** Attempt 1 heartbeated and then went silent: its details carry no failed attempt. */
const lostAttemptDetails = { attempt: 1, bytes: 0, toolCalls: 0, textTail: '', textChars: 0 };

/** A session log of one user message, held in the worker's copy, so the activity reads it without a Query. */
function sessionLog(cache: SessionLogCache): { uptoSeq: number; logDigest: string } {
  const log = new SessionLog();
  log.append({ type: 'turn/start', turn: 1, text: 'hi' }, 0);
  cache.open(run, { tools: [], maxTokens: 100 }, log.events);
  return { uptoSeq: log.length, logDigest: log.digest };
}

function depsWith(logCache: SessionLogCache, random?: () => number): LlmActivityDeps {
  const endpoint = { baseUrl: llm().url, apiKey: 'unit-key' };
  return { dispatcher, providers: { anthropic: endpoint, openai: endpoint, google: endpoint }, streamIdleTimeoutMs: 5_000, logCache, ...(random ? { random } : {}) };
}

/** The worker's client as the activity sees it: the session's Queries for its log, which never answer here. */
function sessionClient(): Client {
  const query = () => Promise.reject(new Error('the session did not answer'));
  return { withAbortSignal: (_signal: AbortSignal, fn: () => Promise<unknown>) => fn(), workflow: { getHandle: () => ({ query }) } } as unknown as Client;
}

function environment(info: { attempt?: number; heartbeatDetails?: unknown; currentAttemptScheduledTimestampMs?: number } = {}): MockActivityEnvironment {
  return new MockActivityEnvironment(
    { workflowExecution: run, attempt: 1, scheduledTimestampMs: Date.now(), currentAttemptScheduledTimestampMs: Date.now(), ...info },
    { client: sessionClient() },
  );
}

const input = (model: string, ref: { uptoSeq: number; logDigest: string }): LlmCallInput => ({
  sessionId: run.workflowId,
  turn: 1,
  step: 1,
  model: `anthropic:${model}`,
  retryPolicy: DEFAULT_RETRY_POLICY,
  ...ref,
});

const failureOf = (call: Promise<unknown>) => call.then(() => undefined, (e: unknown) => e);

describe('the LLM activity, when the failure is not a plain provider error', () => {
  it('leaves a cancelled stream as cancelled, its details the ladder the call spent, for the schedule after it', async () => {
    const model = `cancel-mid-stream-${Date.now()}`;
    llm().script(model, { kind: 'text', text: 'cut off', hold: true });
    const cache = new SessionLogCache(1024 * 1024);
    const env = environment();
    const firstFailureAt = Date.now() - 5_000;
    const call = env.run(createLlmActivities(depsWith(cache)).callLlm, { ...input(model, sessionLog(cache)), ladder: { attempts: 2, firstFailureAt } });
    await llm().waitForRequests(1, { model });
    env.cancel();
    const error = await failureOf(call);
    // The held reply is let go before anything is asserted, so a failing assertion does not keep the server open.
    llm().release(model);
    expect(error).toBeInstanceOf(CancelledFailure);
    expect((error as CancelledFailure).details).toEqual([{ attempts: 2, firstFailureAt }]);
  });

  it('leaves a failure that is not a provider error (a failed Query for the log) as unknown, never retried', async () => {
    const model = `query-failed-${Date.now()}`;
    const cache = new SessionLogCache(1024 * 1024);
    const error = await failureOf(environment().run(createLlmActivities(depsWith(cache)).callLlm, input(model, { uptoSeq: 1, logDigest: 'not-held' })));
    expect(error).toBeInstanceOf(ApplicationFailure);
    expect(error).toMatchObject({ type: 'unknown', nonRetryable: true, message: expect.stringContaining('the session did not answer') });
    expect(llm().requests({ model })).toHaveLength(0);
  });

  it('admits a retry that follows a lost attempt (no failure of its own recorded) only by the policy in its input: retries off stops it before any request', async () => {
    const model = `lost-attempt-${Date.now()}`;
    llm().script(model, { kind: 'text', text: 'should not be asked' });
    const cache = new SessionLogCache(1024 * 1024);
    const env = environment({ attempt: 2, heartbeatDetails: lostAttemptDetails });
    const error = await failureOf(env.run(createLlmActivities(depsWith(cache)).callLlm, { ...input(model, sessionLog(cache)), retryPolicy: null }));
    expect(error).toMatchObject({ type: 'network_error', nonRetryable: true, message: expect.stringContaining('not retried: retry_off') });
    expect(llm().requests({ model })).toHaveLength(0);
  });

  it('waits the random rest of the rung after a lost attempt before its request: Temporal waited the floor, jitter 1 adds the other half', async () => {
    const model = `lost-attempt-jitter-${Date.now()}`;
    llm().script(model, { kind: 'text', text: 'after the jitter' });
    const cache = new SessionLogCache(1024 * 1024);
    // Retry 1 of a 2 s rung: Temporal waited 1 s, the activity waits the other 1 s at jitter 1.
    const slow = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 2_000 };
    const env = environment({ attempt: 2, heartbeatDetails: lostAttemptDetails });
    const started = Date.now();
    const message: AssistantMessage = await env.run(createLlmActivities(depsWith(cache, () => 1)).callLlm, { ...input(model, sessionLog(cache)), retryPolicy: slow });
    expect(message.text).toBe('after the jitter');
    const [request] = llm().requests({ model });
    expect(request!.at - started).toBeGreaterThanOrEqual(1_000 - 20);
    expect(request!.at - started).toBeLessThan(1_000 + 1_000);
  });

  it('leaves as cancelled, before any request, when the cancel arrives during that wait', async () => {
    const model = `lost-attempt-cancel-${Date.now()}`;
    llm().script(model, { kind: 'text', text: 'should not be asked' });
    const cache = new SessionLogCache(1024 * 1024);
    const env = environment({ attempt: 4, heartbeatDetails: lostAttemptDetails });
    // Retry 3 of the default ladder at jitter 1: 2 s more after Temporal's 2 s.
    const call = env.run(createLlmActivities(depsWith(cache, () => 1)).callLlm, input(model, sessionLog(cache)));
    // Admitted without any await; one turn of the event loop later it is in the wait.
    await new Promise((resolve) => setImmediate(resolve));
    env.cancel();
    const error = await failureOf(call);
    expect(error).toBeInstanceOf(CancelledFailure);
    expect(llm().requests({ model })).toHaveLength(0);
  });

  it('lets a retry after an ordinary failure go out without waiting again', async () => {
    const model = `ordinary-retry-${Date.now()}`;
    llm().script(model, { kind: 'text', text: 'second attempt answered' });
    const cache = new SessionLogCache(1024 * 1024);
    const env = environment({
      attempt: 2,
      heartbeatDetails: { attempt: 1, bytes: 0, toolCalls: 0, textTail: '', textChars: 0, firstFailureAt: Date.now(), failedAttempt: 1 },
    });
    const message: AssistantMessage = await env.run(createLlmActivities(depsWith(cache, () => 1)).callLlm, input(model, sessionLog(cache)));
    expect(message.text).toBe('second attempt answered');
  });
});

describe('the LLM activity of a call scheduled again for a new policy', () => {
  it('counts its attempts on from the ladder it carries: after 10, a 529 is final under the default ladder', async () => {
    const model = `carried-count-${Date.now()}`;
    llm().script(model, { kind: 'status', status: 529 });
    const cache = new SessionLogCache(1024 * 1024);
    const call = environment().run(createLlmActivities(depsWith(cache)).callLlm, { ...input(model, sessionLog(cache)), ladder: { attempts: 10, firstFailureAt: Date.now() } });
    expect(await failureOf(call)).toMatchObject({ type: 'overloaded', nonRetryable: true, message: expect.stringContaining('not retried: max_retries') });
  });

  it('measures the budget from the first failure it carries: 240 s ago, the next retry is past it', async () => {
    const model = `carried-budget-${Date.now()}`;
    llm().script(model, { kind: 'status', status: 529 });
    const cache = new SessionLogCache(1024 * 1024);
    const call = environment().run(createLlmActivities(depsWith(cache)).callLlm, { ...input(model, sessionLog(cache)), ladder: { attempts: 1, firstFailureAt: Date.now() - 240_000 } });
    expect(await failureOf(call)).toMatchObject({ type: 'overloaded', nonRetryable: true, message: expect.stringContaining('not retried: budget_exhausted') });
  });

  it('waits out the wait it was taken from before its first request', async () => {
    const model = `carried-wait-${Date.now()}`;
    llm().script(model, { kind: 'text', text: 'after the wait' });
    const cache = new SessionLogCache(1024 * 1024);
    const started = Date.now();
    const message: AssistantMessage = await environment().run(createLlmActivities(depsWith(cache)).callLlm, { ...input(model, sessionLog(cache)), ladder: { attempts: 1, waitMs: 1_000 } });
    expect(message.text).toBe('after the wait');
    expect(llm().requests({ model })[0]!.at - started).toBeGreaterThanOrEqual(1_000 - 20);
  });
});

describe("the LLM activity of a call whose model has a fallback (fallbackAfterMs): the worker's provider health", () => {
  const stopOf = (error: unknown) => ((error as ApplicationFailure).details?.[0] as { stopReason?: string } | undefined)?.stopReason;

  it("stops a new call's first 529 with reason fallback while its model has been failing on this worker that long; without fallbackAfterMs, or once the model answered, the ladder retries it", async () => {
    const model = `fallback-health-${Date.now()}`;
    llm().script(model, ...Array.from({ length: 3 }, () => ({ kind: 'status', status: 529 }) as const), { kind: 'text', text: 'back' }, { kind: 'status', status: 529 });
    const cache = new SessionLogCache(1024 * 1024);
    const worker = createLlmActivities(depsWith(cache, () => 0));
    const call = (fallbackAfterMs: number | undefined, info: { currentAttemptScheduledTimestampMs?: number } = {}) =>
      failureOf(environment(info).run(worker.callLlm, { ...input(model, sessionLog(cache)), ...(fallbackAfterMs === undefined ? {} : { fallbackAfterMs }) }));

    // A call 40 s ago (on the server's clock): its first failure, retried.
    const first = await call(30_000, { currentAttemptScheduledTimestampMs: Date.now() - 40_000 });
    expect(first).toMatchObject({ type: 'overloaded', nonRetryable: false, nextRetryDelay: 500 });
    // A new call now: its first failure, but the model has been failing here for 40 s.
    const next = await call(30_000);
    expect(next).toMatchObject({ type: 'overloaded', nonRetryable: true, message: expect.stringContaining('not retried: fallback') });
    expect(stopOf(next)).toBe('fallback');
    // The same call without a fallback: the ladder as before.
    expect(await call(undefined)).toMatchObject({ type: 'overloaded', nonRetryable: false, nextRetryDelay: 500 });
    // The model answers; the streak is over, and the next failure starts the call's own count.
    const answered: AssistantMessage = await environment().run(worker.callLlm, input(model, sessionLog(cache)));
    expect(answered.text).toBe('back');
    expect(await call(30_000)).toMatchObject({ type: 'overloaded', nonRetryable: false, nextRetryDelay: 500 });
  });
});
