/**
 * The whole default retry ladder, end to end, on the time-skipping test server: a real
 * worker, the real LLM activity, the scripted LLM over HTTP. Temporal's waits pass in
 * server time, so 181 s of backoff take well under a second.
 *
 * Every wait is read from the SERVER's clock: the event times in the session's history
 * (when the call was scheduled, when its last attempt started). Only the last attempt of a
 * call is written to history, so each rung is measured by a session whose call succeeds
 * on the attempt after it: k failures, then an answer, puts the end of the k-th wait on
 * the record. The jitter source is pinned at 0.5, so each wait is exactly 3/4 of its rung.
 *
 * A retry after a LOST attempt (its worker restarted mid-call) waits the same: Temporal
 * the rung's lower half, then the retried attempt the random rest, which passes in server
 * time as that attempt runs (the test server does not skip time while an activity runs).
 */
import { WorkflowUpdateStage } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLog, startSession, turnOutcomeOf, type TurnResult } from '../client/sessions';
import { cancelTurnUpdate, sendUpdate, type SessionInput } from '../contracts/api';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../contracts/retry-policy';
import type { ScriptedReply } from '../testing/scripted-llm/server';
import type { WorkerEnv } from '../worker/config';
import { eventually } from './support/eventually';
import { startTimeSkippingAgent, type TimeSkippingAgent } from './support/time-skipping-agent';

/**
 * Time on the server's clock from scheduling a call to its last attempt is its waits plus
 * the real time its attempts took (a few ms each, more on a loaded machine): never less
 * than the waits (a timer does not fire early; this much for rounding), at most this much
 * more.
 */
const UNDER_MS = 50;
const OVER_MS = 1_500;
const near = (measured: number, expected: number, what: string, under = UNDER_MS) => {
  expect(measured, `${what}: ${measured} ms, expected ${expected} ms`).toBeGreaterThanOrEqual(expected - under);
  expect(measured, `${what}: ${measured} ms, expected ${expected} ms`).toBeLessThanOrEqual(expected + OVER_MS);
};
const JITTER = 0.5;

let a: TimeSkippingAgent;
beforeAll(async () => {
  a = await startTimeSkippingAgent({ random: () => JITTER });
});
afterAll(async () => {
  await a?.close();
});

/** The wait before retry n of the default ladder with the pinned jitter. */
const rung = (n: number) => {
  const base = Math.min(DEFAULT_RETRY_POLICY.baseDelayMs * 2 ** (n - 1), DEFAULT_RETRY_POLICY.maxDelayMs);
  return base / 2 + JITTER * (base / 2);
};
const status = (code: number, headers?: Record<string, string>): ScriptedReply => ({ kind: 'status', status: code, ...(headers ? { headers } : {}) });
const ok: ScriptedReply = { kind: 'text', text: 'fine' };

interface Run {
  model: string;
  workflowId: string;
  turn: TurnResult;
  /** On the server's clock: from scheduling the LLM call to the start of its last attempt. */
  lastAttemptAfterMs: number;
  /** On the server's clock: when the last attempt started. */
  lastAttemptStartedAt: number;
  /** On the server's clock: from the start of the last attempt to its end. */
  lastAttemptRanMs: number;
  attempts: number;
}

let n = 0;
/**
 * One session, one message; the session ends on its idle timer, and its result is awaited,
 * so time skips. `onWorker` is the worker it runs on: the restartable one for a test that
 * stops its worker mid-call.
 */
async function run(
  name: string,
  replies: ScriptedReply[],
  input: Partial<SessionInput> = {},
  during?: (id: string, model: string) => Promise<void>,
  onWorker: Pick<WorkerEnv, 'AGENT_TASK_QUEUE'> = a.workerEnv,
): Promise<Run> {
  const model = `ts-${name}-${++n}-${Date.now()}`;
  a.llm.script(model, ...replies);
  const session = await startSession(a.env.client, onWorker, { model: `anthropic:${model}`, idleTimeoutMs: 1_000, ...input });
  const update = await session.startUpdate(sendUpdate, { args: [{ text: 'hi' }], waitForStage: WorkflowUpdateStage.ACCEPTED });
  await during?.(session.workflowId, model);
  await a.env.client.workflow.result(session.workflowId);
  const turn = await update.result().then((o): TurnResult => ({ status: o.status, turn: o.turn }), (error: unknown) => turnOutcomeOf(error) ?? Promise.reject(error));
  const events = (await session.fetchHistory()).events ?? [];
  const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callLlm');
  const started = events.find((e) => e.activityTaskStartedEventAttributes?.scheduledEventId?.toString() === scheduled?.eventId?.toString());
  const ended = events.find((e) => e.activityTaskCompletedEventAttributes?.startedEventId?.toString() === started?.eventId?.toString() || e.activityTaskFailedEventAttributes?.startedEventId?.toString() === started?.eventId?.toString());
  const startedAt = optionalTsToMs(started?.eventTime) ?? NaN;
  return {
    model,
    workflowId: session.workflowId,
    turn,
    lastAttemptAfterMs: startedAt - (optionalTsToMs(scheduled?.eventTime) ?? NaN),
    lastAttemptStartedAt: startedAt,
    lastAttemptRanMs: (optionalTsToMs(ended?.eventTime) ?? NaN) - startedAt,
    attempts: started?.activityTaskStartedEventAttributes?.attempt ?? 0,
  };
}

describe('the default ladder on the server clock (time skipping)', () => {
  it('waits each rung of 1, 2, 4, 8, 16 s and then 30 s for rungs 6 to 10, with equal jitter, between attempts', async () => {
    // Session k fails k times: its last attempt starts after the first k waits.
    let waits = 0;
    for (let k = 1; k <= 10; k++) {
      const r = await run(`rung${k}`, [...Array.from({ length: k }, () => status(529)), ok]);
      expect(r.turn.status).toBe('completed');
      expect(r.attempts).toBe(k + 1);
      waits += rung(k);
      near(r.lastAttemptAfterMs, waits, `the first ${k} waits`);
    }
  });

  it('gives up after 11 attempts, the last failure carrying its stop reason', async () => {
    const r = await run('eleven', Array.from({ length: 12 }, () => status(529)));
    expect(r.turn).toMatchObject({ status: 'failed', failure: { type: 'overloaded', message: expect.stringContaining('max_retries') } });
    expect(r.attempts).toBe(11);
    expect(a.llm.requests({ model: r.model })).toHaveLength(11);
    const total = Array.from({ length: 10 }, (_, i) => rung(i + 1)).reduce((x, y) => x + y, 0);
    near(r.lastAttemptAfterMs, total, 'all ten waits');
  });

  it('stops within the 240 s budget from the first failure: Retry-After: 50 on every attempt ends after the fifth', async () => {
    const r = await run('budget', Array.from({ length: 12 }, () => status(429, { 'retry-after': '50' })));
    expect(r.turn).toMatchObject({ status: 'failed', failure: { type: 'rate_limit', message: expect.stringContaining('budget_exhausted') } });
    expect(r.attempts).toBe(5);
    near(r.lastAttemptAfterMs, 4 * 50_000, 'four waits of 50 s');
  });

  it('measures the budget from the first failure, carried from attempt to attempt, not from when the call was scheduled: a first attempt that takes 3 s to fail does not eat it', async () => {
    // Four waits of 59.5 s end 238 s after the first failure, inside the 240 s budget; from
    // the schedule they would end at 241 s, past it, and the fifth attempt would not run.
    const wait = status(429, { 'retry-after-ms': '59500' });
    const r = await run('first-failure', [{ ...wait, delayMs: 3_000 }, ...Array.from({ length: 6 }, () => wait)]);
    expect(r.turn).toMatchObject({ status: 'failed', failure: { type: 'rate_limit', message: expect.stringContaining('budget_exhausted') } });
    expect(r.attempts).toBe(5);
    // On the server clock the fifth attempt started more than 240 s after the call was scheduled.
    near(r.lastAttemptAfterMs, 3_000 + 4 * 59_500, 'the slow first attempt and four waits');
    expect(r.lastAttemptAfterMs).toBeGreaterThan(DEFAULT_RETRY_POLICY.budgetMs);
  });

  it('waits out a Retry-After of 45 s, above the 30 s cap and below the 60 s ceiling', async () => {
    const r = await run('ra45', [status(429, { 'retry-after': '45' }), ok]);
    expect(r.turn.status).toBe('completed');
    near(r.lastAttemptAfterMs, 45_000, 'the stated wait');
  });

  it.each([
    ['retry-after-ms', () => ({ 'retry-after-ms': '40000' })],
    ['x-ratelimit-reset-after', () => ({ 'x-ratelimit-reset-after': '40' })],
    ['anthropic-ratelimit-requests-reset', () => ({ 'anthropic-ratelimit-requests-reset': new Date(Date.now() + 40_000).toISOString(), 'anthropic-ratelimit-requests-remaining': '0' })],
  ])('waits the 40 s that %s states', async (_name, headers) => {
    const r = await run('reset', [status(429, headers()), ok]);
    expect(r.turn.status).toBe('completed');
    // An instant is read against the worker's clock, a moment after the test wrote it.
    near(r.lastAttemptAfterMs, 40_000, 'the stated wait', OVER_MS);
  });

  it('waits the same equal jitter after a lost attempt: Temporal the lower half of the rung, the retried attempt the random rest before its request', async () => {
    // An 8 s first rung: at the pinned jitter the wait is 6 s, Temporal's 4 s floor and then
    // 2 s that the retried attempt waits itself (in server time that passes as it runs).
    const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 8_000 };
    let lostFrom = NaN;
    let lostBy = NaN;
    const r = await run('lost', [{ kind: 'text', text: 'never finished', hold: true, holdTimeoutMs: 60_000 }, ok], { retryPolicy: policy }, async (_id, model) => {
      await a.llm.waitForRequests(1, { model });
      // The attempt is lost to its worker's shutdown, somewhere between these two instants.
      lostFrom = await a.env.currentTimeMs();
      await a.restartable.restart();
      lostBy = await a.env.currentTimeMs();
    }, a.restartable.workerEnv);
    expect(r.turn.status).toBe('completed');
    expect(r.attempts).toBe(2);
    expect(a.llm.requests({ model: r.model })).toHaveLength(2);
    // Temporal's wait: at least its 4 s floor after the earliest the attempt can have been
    // lost, and no more than that after the latest (the full rung, 8 s, is far past it).
    expect(r.lastAttemptStartedAt - lostFrom, 'from the lost attempt to the retry').toBeGreaterThanOrEqual(4_000 - UNDER_MS);
    expect(r.lastAttemptStartedAt - lostBy, 'from the lost attempt to the retry').toBeLessThanOrEqual(4_000 + OVER_MS);
    // The retried attempt's own wait, on the server clock: the jitter's 2 s, then one short request.
    near(r.lastAttemptRanMs, 2_000, 'the retried attempt, its jitter wait and its request');
  });

  it('ends cancelled, before any request, when the turn is cancelled during the jitter wait of a retry after a lost attempt', async () => {
    // A 40 s rung: Temporal's 20 s floor passes skipped, then the retried attempt waits 10 s
    // itself, heartbeating; the cancel reaches it at its next heartbeat, long before that.
    const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 40_000, maxDelayMs: 40_000 };
    const r = await run('lost-cancel', [{ kind: 'text', text: 'never finished', hold: true, holdTimeoutMs: 60_000 }, ok], { retryPolicy: policy }, async (id, model) => {
      await a.llm.waitForRequests(1, { model });
      await a.restartable.restart();
      // Awaiting the result lets the server skip Temporal's floor; the attempt then runs.
      const skipping = a.env.client.workflow.result(id).catch(() => undefined);
      await eventually('the retried attempt to start its wait', async () => {
        const pending = (await a.env.client.workflow.getHandle(id).describe()).raw.pendingActivities?.[0];
        return pending?.attempt === 2 && pending.state === temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED ? true : undefined;
      });
      expect(a.llm.requests({ model })).toHaveLength(1);
      await a.env.client.workflow.getHandle(id).executeUpdate(cancelTurnUpdate);
      await skipping;
    }, a.restartable.workerEnv);
    expect(r.turn).toMatchObject({ status: 'cancelled', failure: { type: 'cancelled' } });
    expect(a.llm.requests({ model: r.model })).toHaveLength(1);
    const events = (await a.env.client.workflow.getHandle(r.workflowId).fetchHistory()).events ?? [];
    expect(events.some((e) => e.activityTaskFailedEventAttributes)).toBe(false);
    // The test server records the cancel of a running attempt without its start event: the
    // attempt is timed from the cancel request to the cancel, both on the server clock. It
    // left its 10 s wait within a heartbeat of the request, not when the wait was over.
    const at = (pick: (e: (typeof events)[number]) => unknown) => optionalTsToMs(events.find(pick)?.eventTime) ?? NaN;
    const tookMs = at((e) => e.activityTaskCanceledEventAttributes) - at((e) => e.activityTaskCancelRequestedEventAttributes);
    expect(tookMs, `from the cancel request to the cancel: ${tookMs} ms`).toBeLessThan(5_000);
  });

  it('ends cancelled, never failed, when the turn is cancelled during a backoff wait, and makes no further attempt', async () => {
    const r = await run('cancel-wait', [status(529, { 'retry-after': '50' }), ok], {}, async (id, model) => {
      await a.llm.waitForRequests(1, { model });
      // The first attempt has failed and Temporal holds the call for its 50 s wait.
      await eventually('the call to wait for its retry', async () => {
        const pending = (await a.env.client.workflow.getHandle(id).describe()).raw.pendingActivities?.[0];
        return pending?.attempt === 2 && pending.lastFailure ? true : undefined;
      });
      await a.env.client.workflow.getHandle(id).executeUpdate(cancelTurnUpdate);
    });
    expect(r.turn).toMatchObject({ status: 'cancelled', failure: { type: 'cancelled' } });
    expect(a.llm.requests({ model: r.model })).toHaveLength(1);
    const events = (await a.env.client.workflow.getHandle(r.workflowId).fetchHistory()).events ?? [];
    expect(events.some((e) => e.activityTaskFailedEventAttributes)).toBe(false);
    expect(events.some((e) => e.activityTaskCanceledEventAttributes)).toBe(true);
    const log = await readLog(a.env.client.workflow.getHandle(r.workflowId));
    expect(log.filter((e) => e.type === 'turn/end').map((e) => (e.type === 'turn/end' ? e.status : ''))).toEqual(['cancelled']);
  });
});
