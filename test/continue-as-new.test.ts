import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { endSession, exportHistory, forkSession, readLog, sendAndWait, startSession } from '../client/sessions';
import { stateQuery } from '../contracts/api';
import { workflowBundle } from '../harness/local-agent';
import { REPLAY_BOUND_EVENTS } from '../workflows/continue-as-new';
import { useAgentHarness } from './support/agent-harness';
import { eventually } from './support/eventually';
import { unpairedToolCalls } from './support/pairing';

const h = useAgentHarness();

describe('a long session continues as new', () => {
  it('keeps its conversation, log, fork and replay across runs', async () => {
    const model = `can-${Date.now()}`;
    h().llm.script(
      model,
      { kind: 'tool_calls', calls: [{ id: 'toolu_can1', name: 'calculator', input: { expression: '6*7' } }] },
      { kind: 'text', text: 'It is 42.' },
      { kind: 'text', text: 'You asked about 6*7.' },
    );
    const session = await startSession(h().client, h().env, { model: `anthropic:${model}`, continueAsNewAfterEvents: 20, idleTimeoutMs: 120_000 });
    expect((await sendAndWait(session, 'what is 6*7?')).status).toBe('completed');
    const firstRun = session.firstExecutionRunId;

    // The run continues as new between turns; the next message lands in the new run.
    await eventually('the session to continue as new (a run other than its first)', async () => ((await h().client.workflow.getHandle(session.workflowId).describe()).runId !== firstRun ? true : undefined), 10_000);
    const state = await session.query(stateQuery);
    expect(state.runs).toBe(2);
    expect((await readLog(session)).filter((e) => e.type === 'turn/end')).toHaveLength(1);

    expect((await sendAndWait(session, 'what did I ask?')).status).toBe('completed');
    const [request] = h().llm.requests({ model }).slice(-1);
    const sent = JSON.stringify(request?.body);
    expect(sent).toContain('what is 6*7?');
    expect(sent).toContain('It is 42.');
    expect(unpairedToolCalls(request?.body)).toEqual([]);
    const log = await readLog(session);
    expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i));
    expect(log.filter((e) => e.type === 'turn/end')).toHaveLength(2);

    const fork = await forkSession(h().client, h().env, session.workflowId);
    expect((await readLog(fork)).length).toBe(log.length);
    await endSession(fork);

    await endSession(session);
    await h().client.workflow.getHandle(session.workflowId).result();
    const bundle = await workflowBundle();
    const first = await h().client.workflow.getHandle(session.workflowId, firstRun).fetchHistory();
    await Worker.runReplayHistory({ workflowBundle: bundle }, first);
    await Worker.runReplayHistory({ workflowBundle: bundle }, historyFromJSON(JSON.parse(await exportHistory(h().client, session.workflowId))));
  });
});

describe('a session of revision 2 keeps its runs short for the replay after an eviction', () => {
  /** A turn of 60 steps of three calculator calls: well past REPLAY_BOUND_EVENTS of history. */
  async function longTurn(revision: 1 | 2) {
    const model = `replay-bound-${revision}-${Date.now()}`;
    const step = { kind: 'tool_calls' as const, calls: ['1+1', '2+2', '3+3'].map((expression) => ({ name: 'calculator', input: { expression } })) };
    h().llm.script(model, ...Array.from({ length: 60 }, () => step), { kind: 'text', text: 'Done.' }, { kind: 'text', text: 'Still here.' });
    const session = await startSession(h().client, h().env, { model: `anthropic:${model}`, maxSteps: 100, idleTimeoutMs: 120_000, revision });
    expect((await sendAndWait(session, 'sixty sums')).status).toBe('completed');
    const firstRun = await h().client.workflow.getHandle(session.workflowId, session.firstExecutionRunId).describe();
    return { session, firstRun };
  }

  it('continues as new after the turn that took its run past the bound, carrying the log without a compaction; the first revision stays in its run', async () => {
    // Both at once: each is a minute of a worker's tool calls, and they share nothing.
    const [second, first] = await Promise.all([longTurn(2), longTurn(1)]);
    const { session, firstRun } = second;
    expect(firstRun.historyLength).toBeGreaterThanOrEqual(REPLAY_BOUND_EVENTS);
    await eventually('the session to continue as new', async () => ((await h().client.workflow.getHandle(session.workflowId).describe()).runId !== session.firstExecutionRunId ? true : undefined), 10_000);
    expect((await sendAndWait(session, 'still there?')).status).toBe('completed');
    const current = await h().client.workflow.getHandle(session.workflowId).describe();
    expect(current.historyLength).toBeLessThan(100);
    expect((await session.query(stateQuery)).runs).toBe(2);
    const log = await readLog(session);
    expect(log.filter((e) => e.type === 'context/compacted')).toEqual([]);
    expect(log.filter((e) => e.type === 'turn/end')).toHaveLength(2);

    // The first revision continues as new only when Temporal suggests it.
    expect(first.firstRun.historyLength).toBeGreaterThanOrEqual(REPLAY_BOUND_EVENTS);
    expect((await sendAndWait(first.session, 'still there?')).status).toBe('completed');
    expect((await h().client.workflow.getHandle(first.session.workflowId).describe()).runId).toBe(first.session.firstExecutionRunId);
    await Promise.all([endSession(session), endSession(first.session)]);
  });
});

describe('a session whose log outgrows what one run can carry', () => {
  /** A session forked from one whose first turn is 1.6 MB: its log is more than one run may carry. */
  async function bigSession(model: string) {
    h().llm.script(model, { kind: 'tool_calls', calls: [{ name: 'calculator', input: { expression: '1+1' } }] }, { kind: 'text', text: 'ok' });
    return startSession(h().client, h().env, {
      model: `anthropic:${model}`,
      continueAsNewAfterEvents: 20,
      idleTimeoutMs: 120_000,
      fork: {
        fromWorkflowId: 'an-old-session',
        events: [
          { type: 'turn/start', seq: 0, at: 0, turn: 1, text: 'x'.repeat(1_600_000) },
          { type: 'turn/end', seq: 1, at: 0, turn: 1, status: 'completed', reason: 'answered' },
        ],
      },
    });
  }

  it('compacts before it continues as new, carries only the tail, and goes on', async () => {
    const model = `can-compact-${Date.now()}`;
    const session = await bigSession(model);
    expect((await sendAndWait(session, 'one more')).status).toBe('completed');
    const firstRun = session.firstExecutionRunId;
    await eventually('the session to continue as new (a run other than its first)', async () => ((await h().client.workflow.getHandle(session.workflowId).describe()).runId !== firstRun ? true : undefined), 10_000);

    const state = await session.query(stateQuery);
    const turn2End = 11;
    expect(state).toMatchObject({ runs: 2, firstSeq: turn2End + 1, continuedFromRunId: firstRun, stepsTaken: 2 });
    expect(h().llm.requests({ model, purpose: 'compact' })).toHaveLength(1);
    h().llm.script(model, { kind: 'text', text: 'still here' });
    expect((await sendAndWait(session, 'and another')).status).toBe('completed');
    const sent = JSON.stringify(h().llm.requests({ model, purpose: 'step' }).at(-1)?.body);
    expect(sent).not.toContain('xxxxxxxxxx');
    expect(sent).toContain('and another');

    const log = await readLog(session);
    expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i));
    expect(log.filter((e) => e.type === 'context/compacted')).toEqual([expect.objectContaining({ turn: 2, throughSeq: turn2End })]);
    await endSession(session);
    await h().client.workflow.getHandle(session.workflowId).result();
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, await h().client.workflow.getHandle(session.workflowId, firstRun).fetchHistory());
  });

  it('ends with payload_too_large when even the compacted tail cannot be carried, and stays readable', async () => {
    const model = `can-big-${Date.now()}`;
    h().llm.scriptCompaction(model, { kind: 'text', text: 'y'.repeat(1_600_000), chunkSize: 100_000 });
    const session = await bigSession(model);
    expect((await sendAndWait(session, 'one more')).status).toBe('completed');
    await expect(session.result()).rejects.toMatchObject({ cause: { type: 'payload_too_large', message: expect.stringMatching(/fork it from an earlier event/) } });
    expect((await readLog(session)).at(-1)).toMatchObject({ type: 'context/compacted', turn: 2 });
  });
});
