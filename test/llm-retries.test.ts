import { WorkflowUpdateStage } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { readProgress } from '../client/progress';
import { sendAndWait, startSession, turnOutcomeOf } from '../client/sessions';
import { cancelTurnUpdate, logQuery, sendUpdate, setRetryPolicyUpdate, type SessionInput } from '../contracts/api';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../contracts/retry-policy';
import type { ScriptedReply } from '../testing/scripted-llm/server';
import { useAgentHarness } from './support/agent-harness';
import { eventually } from './support/eventually';

/** Attempt n+1 is at most this much later than its ladder rung: Temporal's timer and dispatch latency. */
const SCHEDULING_SLACK_MS = 1_500;
const IDLE_TIMEOUT_MS = 1_500;

const h = useAgentHarness({ env: { AGENT_LLM_IDLE_TIMEOUT_MS: String(IDLE_TIMEOUT_MS) }, heartbeatIntervalMs: 200 });

let n = 0;
function session(provider: string, name: string, replies: ScriptedReply[], input: Partial<SessionInput> = {}) {
  const model = `ladder-${name}-${provider}-${++n}-${Date.now()}`;
  h().llm.script(model, ...replies);
  return {
    model,
    start: () => startSession(h().client, h().env, { model: `${provider}:${model}`, idleTimeoutMs: 300_000, ...input }),
  };
}
const ok: ScriptedReply = { kind: 'text', text: 'fine' };
const status = (code: number, headers?: Record<string, string>): ScriptedReply => ({ kind: 'status', status: code, ...(headers ? { headers } : {}) });
const gaps = (times: number[]) => times.slice(1).map((t, i) => t - (times[i] ?? 0));

/** A session's history, and the event ids that scheduled its LLM calls. */
async function llmHistory(workflowId: string) {
  const events = (await h().client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const llmCalls = new Set(events.flatMap((e) => (e.activityTaskScheduledEventAttributes?.activityType?.name === 'callLlm' ? [String(e.eventId)] : [])));
  return { events, llmCalls };
}

/**
 * Each LLM call's attempts and the failure that its last attempt retried, from history:
 * Temporal writes a call's started event when the call closes, with its attempt count and
 * the last failure. Read after the call, so no retry can slip between two samples.
 */
async function llmAttempts(workflowId: string): Promise<{ attempt: number; retried?: string }[]> {
  const { events, llmCalls } = await llmHistory(workflowId);
  return events.flatMap((e) => {
    const started = e.activityTaskStartedEventAttributes;
    if (!started || !llmCalls.has(String(started.scheduledEventId))) return [];
    const retried = started.lastFailure?.applicationFailureInfo?.type;
    return [{ attempt: started.attempt ?? 1, ...(retried ? { retried } : {}) }];
  });
}

/** How each LLM activity of a session closed, from history: `completed`, `failed`, `timed_out` or `cancelled`. */
async function closedLlmCalls(workflowId: string): Promise<string[]> {
  const { events, llmCalls } = await llmHistory(workflowId);
  return events.flatMap((e) => {
    const closed: [string, { scheduledEventId?: unknown } | null | undefined][] = [
      ['completed', e.activityTaskCompletedEventAttributes],
      ['failed', e.activityTaskFailedEventAttributes],
      ['timed_out', e.activityTaskTimedOutEventAttributes],
      ['cancelled', e.activityTaskCanceledEventAttributes],
    ];
    return closed.flatMap(([how, attributes]) => (attributes && llmCalls.has(String(attributes.scheduledEventId)) ? [how] : []));
  });
}

/** The final failures of LLM activities, from history (retried attempts are not written there). */
async function failureTypes(workflowId: string): Promise<string[]> {
  const history = await h().client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).flatMap((e) => (e.activityTaskFailedEventAttributes ? [e.activityTaskFailedEventAttributes.failure?.applicationFailureInfo?.type ?? ''] : []));
}

describe.each(['anthropic', 'openai', 'google'])('the LLM call on %s, retried by Temporal on the ladder', (provider) => {
  it('retries 529 three times, then succeeds: 4 attempts, each gap inside its rung of 1, 2, 4 s with equal jitter', async () => {
    const s = session(provider, '529x3', [status(529), status(529), status(529), ok]);
    const turn = await sendAndWait(await s.start(), 'hi');
    expect(turn.status).toBe('completed');
    const requests = h().llm.requests({ model: s.model });
    expect(requests).toHaveLength(4);
    gaps(requests.map((r) => r.at)).forEach((gap, i) => {
      const base = Math.min(DEFAULT_RETRY_POLICY.baseDelayMs * 2 ** i, DEFAULT_RETRY_POLICY.maxDelayMs);
      expect(gap).toBeGreaterThanOrEqual(base / 2);
      expect(gap).toBeLessThanOrEqual(base + SCHEDULING_SLACK_MS);
    });
  });

  it('never retries a 401: 1 attempt, failure type auth_error', async () => {
    const s = session(provider, '401', [status(401), ok]);
    const turn = await sendAndWait(await s.start(), 'hi');
    expect(turn).toMatchObject({ status: 'failed', failure: { type: 'auth_error' } });
    expect(h().llm.requests({ model: s.model })).toHaveLength(1);
  });

  it('waits at least the 3 s of Retry-After before the next attempt', async () => {
    const s = session(provider, 'ra3', [status(429, { 'retry-after': '3' }), ok]);
    const turn = await sendAndWait(await s.start(), 'hi');
    expect(turn.status).toBe('completed');
    const [gap] = gaps(h().llm.requests({ model: s.model }).map((r) => r.at));
    expect(gap).toBeGreaterThanOrEqual(3_000);
    expect(gap).toBeLessThanOrEqual(3_000 + SCHEDULING_SLACK_MS);
  });

  it('fails at once on Retry-After: 120, carrying retryAfterMs, instead of waiting it out', async () => {
    const s = session(provider, 'ra120', [status(429, { 'retry-after': '120' }), ok]);
    const handle = await s.start();
    const turn = await sendAndWait(handle, 'hi');
    expect(turn).toMatchObject({ status: 'failed', failure: { type: 'rate_limit', message: expect.stringContaining('retry_after_too_long') } });
    expect(h().llm.requests({ model: s.model })).toHaveLength(1);
    const history = await handle.fetchHistory();
    const failed = history.events?.find((e) => e.activityTaskFailedEventAttributes)?.activityTaskFailedEventAttributes;
    const details = JSON.parse(Buffer.from(failed?.failure?.applicationFailureInfo?.details?.payloads?.[0]?.data ?? []).toString());
    expect(details).toMatchObject({ retryAfterMs: 120_000, stopReason: 'retry_after_too_long', status: 429 });
  });

  it('retries a truncated stream as a network_error and then succeeds', async () => {
    const s = session(provider, 'truncate', [{ kind: 'truncate', text: 'half an ans' }, ok]);
    const handle = await s.start();
    expect((await sendAndWait(handle, 'hi')).status).toBe('completed');
    expect(await llmAttempts(handle.workflowId)).toEqual([{ attempt: 2, retried: 'network_error' }]);
    expect(h().llm.requests({ model: s.model })).toHaveLength(2);
  });

  it('retries a stream cut in the middle of a structured answer, and keeps the JSON of the retry', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
    const s = session(provider, 'truncate-json', [{ kind: 'truncate', text: '{"city": "Par' }, { kind: 'json', value: { city: 'Paris' } }], { outputSchema: schema });
    const handle = await s.start();
    expect(await sendAndWait(handle, 'hi')).toMatchObject({ status: 'completed', reason: 'answered' });
    expect(await llmAttempts(handle.workflowId)).toEqual([{ attempt: 2, retried: 'network_error' }]);
    // Both attempts asked for the turn's schema natively: the activity reads it from the turn's start.
    const requests = h().llm.requests({ model: s.model });
    expect(requests.map((r) => [r.replyKind, r.output?.schema])).toEqual([
      ['truncate', schema],
      ['json', schema],
    ]);
    const log = await handle.query(logQuery, {});
    expect(log.flatMap((e) => (e.type === 'assistant' ? [JSON.parse(e.message.text) as unknown] : []))).toEqual([{ city: 'Paris' }]);
    expect(log.find((e) => e.type === 'turn/end')).toMatchObject({ status: 'completed', output: { city: 'Paris' } });
  });
});

describe('the retry ladder, end to end on one provider', () => {
  const fast: RetryPolicy = { maxRetries: 10, baseDelayMs: 100, maxDelayMs: 400, budgetMs: 60_000, maxServerWaitMs: 60_000 };

  it('gives up after 11 attempts when every attempt is a 529, and reports overloaded', async () => {
    const s = session('anthropic', 'always529', Array.from({ length: 12 }, () => status(529)), { retryPolicy: fast });
    const handle = await s.start();
    const turn = await sendAndWait(handle, 'hi');
    expect(turn).toMatchObject({ status: 'failed', failure: { type: 'overloaded' } });
    expect(h().llm.requests({ model: s.model })).toHaveLength(11);
    expect(await failureTypes(handle.workflowId)).toEqual(['overloaded']);
  });

  it('stops when the next wait would end past the budget measured from the first failure', async () => {
    const tight: RetryPolicy = { maxRetries: 10, baseDelayMs: 1_000, maxDelayMs: 1_000, budgetMs: 2_500, maxServerWaitMs: 60_000 };
    const s = session('anthropic', 'budget', Array.from({ length: 12 }, () => status(503)), { retryPolicy: tight });
    const turn = await sendAndWait(await s.start(), 'hi');
    expect(turn).toMatchObject({ status: 'failed', failure: { type: 'server_error', message: expect.stringContaining('budget_exhausted') } });
    const requests = h().llm.requests({ model: s.model });
    // Waits of 0.5–1 s each: at least 3 attempts fit in 2.5 s, never more than 6.
    expect(requests.length).toBeGreaterThanOrEqual(3);
    expect(requests.length).toBeLessThanOrEqual(6);
    expect((requests.at(-1)?.at ?? 0) - (requests[0]?.at ?? 0)).toBeLessThanOrEqual(2_500 + SCHEDULING_SLACK_MS);
  });

  it('makes exactly one attempt when the session opted out of retries with null', async () => {
    const s = session('openai', 'optout', [status(529), ok], { retryPolicy: null });
    const turn = await sendAndWait(await s.start(), 'hi');
    expect(turn).toMatchObject({ status: 'failed', failure: { type: 'overloaded' } });
    expect(h().llm.requests({ model: s.model })).toHaveLength(1);
  });

  it('applies a policy switched off by Update mid-session to the next failing call: one attempt', async () => {
    const s = session('anthropic', 'switchoff', [ok, status(529), ok]);
    const handle = await s.start();
    expect((await sendAndWait(handle, 'first')).status).toBe('completed');
    expect(await handle.executeUpdate(setRetryPolicyUpdate, { args: [null] })).toBeNull();
    const turn = await sendAndWait(handle, 'second');
    expect(turn).toMatchObject({ status: 'failed', failure: { type: 'overloaded' } });
    expect(h().llm.requests({ model: s.model })).toHaveLength(2);
  });

  it('rejects a policy outside RETRY_LIMITS with a message naming the field, before it reaches history', async () => {
    const s = session('anthropic', 'badpolicy', []);
    const handle = await s.start();
    await expect(handle.executeUpdate(setRetryPolicyUpdate, { args: [{ ...DEFAULT_RETRY_POLICY, maxRetries: 50 }] })).rejects.toMatchObject({
      cause: { message: expect.stringMatching(/invalid retry policy: maxRetries: maxRetries must be at most 10/) },
    });
    const history = await handle.fetchHistory();
    expect(history.events?.some((e) => e.workflowExecutionUpdateAcceptedEventAttributes)).toBe(false);
    await handle.terminate('test cleanup');
  });

  it('shows the retry while it waits: attempt count, last failure and next attempt time of the pending activity', async () => {
    const s = session('google', 'visible', [status(503, { 'retry-after': '3' }), ok]);
    const handle = await s.start();
    const done = sendAndWait(handle, 'hi');
    await h().llm.waitForRequests(1, { model: s.model });
    const seen = await eventually('the pending activity to show its failed attempt', async () => (await readProgress(h().client, handle)).activities.find((a) => a.lastFailure), 4_000);
    expect(seen).toMatchObject({ activityType: 'callLlm', attempt: 2, maximumAttempts: 11, lastFailure: { type: 'server_error' } });
    expect(seen?.nextAttemptAt).toBeGreaterThan(Date.now());
    expect((await done).status).toBe('completed');
  });

  it('cancels a turn during a stream: the request is closed, nothing is retried, the turn is cancelled', async () => {
    const s = session('anthropic', 'abort', [{ kind: 'text', text: 'a long answer', stall: { ms: -1, pingEveryMs: 200 } }, ok]);
    const handle = await s.start();
    const update = await handle.startUpdate(sendUpdate, { args: [{ text: 'hi' }], waitForStage: WorkflowUpdateStage.ACCEPTED });
    // Under way: the activity has heartbeated bytes of the stream it is reading.
    await eventually('the stream to be under way', async () => (await readProgress(h().client, handle)).activities.find((a) => (a.heartbeat?.bytes ?? 0) > 0));
    await handle.executeUpdate(cancelTurnUpdate);
    const outcome = await update.result().then(() => undefined, turnOutcomeOf);
    expect(outcome).toMatchObject({ status: 'cancelled', failure: { type: 'cancelled' } });
    // The call is closed as cancelled in history, so Temporal has no attempt of it left to run;
    // and the next message is answered by the next request, the one scripted after the stream.
    expect(await closedLlmCalls(handle.workflowId)).toEqual(['cancelled']);
    const settled = await eventually('the request to be settled', () => {
      const outcome = h().llm.requests({ model: s.model })[0]?.outcome;
      return outcome === 'pending' ? undefined : outcome;
    });
    expect(settled).toBe('aborted-by-client');
    expect(await sendAndWait(handle, 'again')).toMatchObject({ status: 'completed' });
    const requests = h().llm.requests({ model: s.model });
    expect(requests.map((r) => r.replyKind)).toEqual(['text', 'text']);
    expect(JSON.stringify(requests[1]?.body)).toContain('again');
    expect(await failureTypes(handle.workflowId)).toEqual([]);
  });

  it('keeps a stream that pauses longer than the idle timeout but sends pings', async () => {
    const s = session('anthropic', 'pings', [{ kind: 'text', text: 'slow thought', stall: { ms: IDLE_TIMEOUT_MS * 2, pingEveryMs: 300 } }]);
    const turn = await sendAndWait(await s.start(), 'hi');
    expect(turn.status).toBe('completed');
    expect(h().llm.requests({ model: s.model })).toHaveLength(1);
  });

  it('cuts a silent stall as a network_error and retries it', async () => {
    const s = session('openai', 'silent', [{ kind: 'text', text: 'dead socket', stall: { ms: -1 } }, ok]);
    const handle = await s.start();
    expect((await sendAndWait(handle, 'hi')).status).toBe('completed');
    expect(await llmAttempts(handle.workflowId)).toEqual([{ attempt: 2, retried: 'network_error' }]);
    const requests = h().llm.requests({ model: s.model });
    expect(requests).toHaveLength(2);
    expect(gaps(requests.map((r) => r.at))[0]).toBeGreaterThanOrEqual(IDLE_TIMEOUT_MS);
  });
});
