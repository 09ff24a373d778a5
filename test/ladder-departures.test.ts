/**
 * Where the code once departed from the retry and compensation rules, each proved end to
 * end on the dev server with a real worker and the scripted LLM:
 * - retries switched off stay off across continue-as-new;
 * - a retry after a lost attempt obeys the policy the call was scheduled with;
 * - the budget is measured from the first failure, carried between attempts, not from
 *   when the call was scheduled;
 * - a step that fails after its assistant message but before any dispatch answers every
 *   call with TOOL_NOT_STARTED.
 */
import { WorkflowUpdateStage } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { readLog, sendAndWait, startSession, turnOutcomeOf } from '../client/sessions';
import { cancelTurnUpdate, sendUpdate, setRetryPolicyUpdate, stateQuery, type SessionInput } from '../contracts/api';
import type { RetryPolicy } from '../contracts/retry-policy';
import type { ScriptedReply } from '../testing/scripted-llm/server';
import { useAgentHarness } from './support/agent-harness';
import { eventually } from './support/eventually';
import { unpairedToolCalls } from './support/pairing';

const h = useAgentHarness();

let n = 0;
function session(name: string, replies: ScriptedReply[], input: Partial<SessionInput> = {}) {
  const model = `departure-${name}-${++n}-${Date.now()}`;
  h().llm.script(model, ...replies);
  return { model, start: () => startSession(h().client, h().env, { model: `anthropic:${model}`, idleTimeoutMs: 120_000, ...input }) };
}
const ok: ScriptedReply = { kind: 'text', text: 'fine' };

describe('the retry policy of a session', () => {
  it('switched off by Update stays off after the session continues as new: a 529 in the next run gets exactly one attempt', async () => {
    const s = session(
      'off-after-can',
      [{ kind: 'tool_calls', calls: [{ id: 'toolu_can', name: 'calculator', input: { expression: '6*7' } }] }, ok, { kind: 'status', status: 529 }, ok],
      // A turn with a tool call writes more than 20 events: the run continues as new after it.
      // The session starts with the default policy, so only what it carries can say "off".
      { continueAsNewAfterEvents: 20 },
    );
    const handle = await s.start();
    expect(await handle.executeUpdate(setRetryPolicyUpdate, { args: [null] })).toBeNull();
    expect((await sendAndWait(handle, 'first')).status).toBe('completed');
    await eventually('the session to continue as new', async () => ((await handle.query(stateQuery)).runs === 2 ? true : undefined));
    expect((await handle.query(stateQuery)).retryPolicy).toBeNull();

    const turn = await sendAndWait(handle, 'second');
    expect(turn).toMatchObject({ status: 'failed', failure: { type: 'overloaded' } });
    expect(h().llm.requests({ model: s.model })).toHaveLength(3);
  });
});

describe('a retry after a lost attempt', () => {
  it('is stopped by the policy the call was scheduled with before any request: retries off, the worker stops mid-call, the next attempt sends nothing', async () => {
    const s = session('lost-attempt', [{ kind: 'text', text: 'never finished', hold: true, holdTimeoutMs: 60_000 }, ok], { retryPolicy: null });
    const handle = await s.start();
    const update = await handle.startUpdate(sendUpdate, { args: [{ text: 'hi' }], waitForStage: WorkflowUpdateStage.ACCEPTED });
    await h().llm.waitForRequests(1, { model: s.model });
    // The attempt is lost to its worker's shutdown, not failed by the activity's own ladder.
    await h().stopWorker();
    await h().startWorker();
    const turn = await update.result().then(() => undefined, turnOutcomeOf);
    expect(turn).toMatchObject({ status: 'failed', failure: { message: expect.stringContaining('not retried: retry_off') } });
    expect(h().llm.requests({ model: s.model })).toHaveLength(1);
  }, 90_000);
});

describe('the retry budget', () => {
  it('is measured from the first failure, not from when the call was scheduled: a slow first attempt does not eat it', async () => {
    // The first attempt fails 3 s after it was scheduled; the budget is 2.5 s. Measured
    // from the schedule, it is spent before the first retry; from the first failure, waits
    // of 0.5–1 s leave room for at least two retries.
    const tight: RetryPolicy = { maxRetries: 10, baseDelayMs: 1_000, maxDelayMs: 1_000, budgetMs: 2_500, maxServerWaitMs: 60_000 };
    const s = session('budget-start', [{ kind: 'status', status: 503, delayMs: 3_000 }, ...Array.from({ length: 10 }, () => ({ kind: 'status', status: 503 }) as const)], { retryPolicy: tight });
    const turn = await sendAndWait(await s.start(), 'hi');
    expect(turn).toMatchObject({ status: 'failed', failure: { type: 'server_error', message: expect.stringContaining('budget_exhausted') } });
    expect(h().llm.requests({ model: s.model }).length).toBeGreaterThanOrEqual(3);
  });
});

describe('a step that fails after its assistant message, before any call was dispatched', () => {
  it('answers every call with TOOL_NOT_STARTED in call order, closes the step cancelled, and the next request pairs them all', async () => {
    const s = session(
      'before-dispatch',
      [
        {
          kind: 'tool_calls',
          calls: [
            { id: 'toolu_nd1', name: 'write_file', input: { path: 'notes/x.txt', content: 'x' } },
            { id: 'toolu_nd2', name: 'calculator', input: { expression: '1+1' } },
          ],
        },
        ok,
      ],
      { approvalRequired: ['write_file'] },
    );
    const handle = await s.start();
    const update = await handle.startUpdate(sendUpdate, { args: [{ text: 'write it' }], waitForStage: WorkflowUpdateStage.ACCEPTED });
    await eventually('the write to wait for approval', async () => ((await handle.query(stateQuery)).pendingApprovals.length > 0 ? true : undefined));
    await handle.executeUpdate(cancelTurnUpdate);
    expect(await update.result().then(() => undefined, turnOutcomeOf)).toMatchObject({ status: 'cancelled' });

    const events = await readLog(handle);
    expect(events.some((e) => e.type === 'tool/call')).toBe(false);
    const tail = events.slice(events.findIndex((e) => e.type === 'assistant') + 1);
    expect(tail.map((e) => [e.type, e.type === 'tool/result' ? `${e.callId} ${e.code}` : 'status' in e ? e.status : ''])).toEqual([
      ['tool/result', 'toolu_nd1 TOOL_NOT_STARTED'],
      ['tool/result', 'toolu_nd2 TOOL_NOT_STARTED'],
      ['step/end', 'cancelled'],
      ['turn/end', 'cancelled'],
    ]);
    expect((await sendAndWait(handle, 'go on')).status).toBe('completed');
    expect(unpairedToolCalls(h().llm.requests({ model: s.model }).at(-1)?.body)).toEqual([]);
  });
});
