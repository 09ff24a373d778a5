/**
 * How the LLM activity leaves when something other than a classified provider error
 * happens: a cancel that arrives while it asks the session for its live policy, and a
 * failure that is not a provider error at all. Unit level: the activity runs in
 * MockActivityEnvironment against the real scripted LLM over HTTP; the session's Query
 * is a stand-in whose answer the test releases, so the cancel lands inside that await.
 */
import type { Client } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { createLlmActivities, type LlmActivityDeps } from '../activities/llm/activity';
import { SessionLogCache } from '../activities/llm/session-log-cache';
import type { LlmCallInput } from '../contracts/llm-call';
import type { AssistantMessage } from '../contracts/messages';
import { DEFAULT_RETRY_POLICY, type SessionRetryPolicy } from '../contracts/retry-policy';
import { SessionLog } from '../contracts/session-log';
import { barrier } from './support/barrier';
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

/** The worker's client as the activity sees it: only the session's Query, answered by `query`. */
function sessionClient(query: () => Promise<unknown>): Client {
  return { withAbortSignal: (_signal: AbortSignal, fn: () => Promise<unknown>) => fn(), workflow: { getHandle: () => ({ query }) } } as unknown as Client;
}

function environment(query: () => Promise<unknown>, info: { attempt?: number; heartbeatDetails?: unknown } = {}): MockActivityEnvironment {
  const client = sessionClient(query);
  return new MockActivityEnvironment(
    { workflowExecution: run, attempt: 1, scheduledTimestampMs: Date.now(), currentAttemptScheduledTimestampMs: Date.now(), ...info },
    { client },
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

describe('the LLM activity, when the failure is not a plain provider error', () => {
  it('leaves as cancelled, not as a retryable overloaded, when the cancel arrives while it asks the session for its live policy', async () => {
    const model = `cancel-during-query-${Date.now()}`;
    llm().script(model, { kind: 'status', status: 529 });
    const cache = new SessionLogCache(1024 * 1024);
    const asked = barrier();
    const answer = barrier<SessionRetryPolicy>();
    const env = environment(() => {
      asked.open();
      return answer.wait();
    });
    const call = env.run(createLlmActivities(depsWith(cache)).callLlm, input(model, sessionLog(cache)));
    await asked.wait();
    env.cancel();
    answer.open(DEFAULT_RETRY_POLICY);
    const error = await call.then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(CancelledFailure);
    expect(llm().requests({ model })).toHaveLength(1);
  });

  it('leaves a failure that is not a provider error (a failed Query for the log) as unknown, never retried', async () => {
    const model = `query-failed-${Date.now()}`;
    const cache = new SessionLogCache(1024 * 1024);
    const env = environment(() => Promise.reject(new Error('the session did not answer')));
    const error = await env.run(createLlmActivities(depsWith(cache)).callLlm, input(model, { uptoSeq: 1, logDigest: 'not-held' })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApplicationFailure);
    expect(error).toMatchObject({ type: 'unknown', nonRetryable: true, message: expect.stringContaining('the session did not answer') });
    expect(llm().requests({ model })).toHaveLength(0);
  });

  it('admits a retry that follows a lost attempt (no failure of its own recorded) only by the live policy: retries off stops it before any request', async () => {
    const model = `lost-attempt-${Date.now()}`;
    llm().script(model, { kind: 'text', text: 'should not be asked' });
    const cache = new SessionLogCache(1024 * 1024);
    // Attempt 1 heartbeated and then went silent: its details carry no failed attempt.
    const env = environment(() => Promise.resolve(null), { attempt: 2, heartbeatDetails: { attempt: 1, bytes: 0, toolCalls: 0, textTail: '', textChars: 0 } });
    const error = await env.run(createLlmActivities(depsWith(cache)).callLlm, input(model, sessionLog(cache))).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ type: 'network_error', nonRetryable: true, message: expect.stringContaining('not retried: retry_off') });
    expect(llm().requests({ model })).toHaveLength(0);
  });

  it('waits the random rest of the rung after a lost attempt before its request: Temporal waited the floor, jitter 1 adds the other half', async () => {
    const model = `lost-attempt-jitter-${Date.now()}`;
    llm().script(model, { kind: 'text', text: 'after the jitter' });
    const cache = new SessionLogCache(1024 * 1024);
    // Retry 1 of a 2 s rung: Temporal waited 1 s, the activity waits the other 1 s at jitter 1.
    const slow = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 2_000 };
    const env = environment(() => Promise.resolve(slow), { attempt: 2, heartbeatDetails: lostAttemptDetails });
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
    const asked = barrier();
    const env = environment(() => {
      asked.open();
      return Promise.resolve(DEFAULT_RETRY_POLICY);
    }, { attempt: 4, heartbeatDetails: lostAttemptDetails });
    // Retry 3 of the default ladder at jitter 1: 2 s more after Temporal's 2 s.
    const call = env.run(createLlmActivities(depsWith(cache, () => 1)).callLlm, input(model, sessionLog(cache)));
    // Admitted by the live policy; one turn of the event loop later it is in the wait.
    await asked.wait();
    await new Promise((resolve) => setImmediate(resolve));
    env.cancel();
    const error = await call.then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(CancelledFailure);
    expect(llm().requests({ model })).toHaveLength(0);
  });

  it('lets a retry after an ordinary failure go out without asking again', async () => {
    const model = `ordinary-retry-${Date.now()}`;
    llm().script(model, { kind: 'text', text: 'second attempt answered' });
    const cache = new SessionLogCache(1024 * 1024);
    const env = environment(() => Promise.resolve(null), {
      attempt: 2,
      heartbeatDetails: { attempt: 1, bytes: 0, toolCalls: 0, textTail: '', textChars: 0, firstFailureAt: Date.now(), failedAttempt: 1 },
    });
    const message: AssistantMessage = await env.run(createLlmActivities(depsWith(cache)).callLlm, input(model, sessionLog(cache)));
    expect(message.text).toBe('second attempt answered');
  });
});
