import type { Client } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { endSession, forkSession, readLatestRunLog, readLog, sendAndWait, startSession, type SessionHandle } from '../client/sessions';
import { sessionTools } from '../client/session-tools';
import { SESSION_WORKFLOW, stateQuery, type SessionInput } from '../contracts/api';
import { useAgentHarness } from './support/agent-harness';
import { eventually } from './support/eventually';
import { turnThatRead } from '../harness/turn-that-read';

const h = useAgentHarness();

/** The input a run of the session was started with, as its history holds it. */
async function runInput(client: Client, workflowId: string, runId?: string): Promise<SessionInput> {
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  let payloads = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
  const converter = client.options.loadedDataConverter;
  for (const codec of [...converter.payloadCodecs].reverse()) payloads = await codec.decode(payloads);
  return converter.payloadConverter.fromPayload<SessionInput>(payloads[0]!);
}

/** The activity ids the run scheduled its LLM calls with. */
async function llmActivityIds(client: Client, workflowId: string, runId?: string): Promise<string[]> {
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  return (history.events ?? []).flatMap((e) => {
    const scheduled = e.activityTaskScheduledEventAttributes;
    return scheduled?.activityType?.name === 'callLlm' ? [scheduled.activityId ?? ''] : [];
  });
}

describe('a compaction whose own request is too long', () => {
  it('is asked once more with the large tool results of earlier turns sent as one line, and the turn goes on', async () => {
    const model = `compact-overflow-${Date.now()}`;
    // 40 000 characters: 10 000 tokens, more than the whole window.
    const big = 'q'.repeat(40_000);
    h().llm.setContextWindow(model, 8_000);
    h().llm.script(model, { kind: 'text', text: 'It was all q.' });
    const session = await startSession(h().client, h().env, {
      model: `anthropic:${model}`,
      contextWindow: 8_000,
      idleTimeoutMs: 120_000,
      fork: { fromWorkflowId: 'a-session-that-read-a-big-file', events: turnThatRead(big) },
    });

    expect(await sendAndWait(session, 'what was in it?')).toMatchObject({ status: 'completed' });
    const compactions = h().llm.requests({ model, purpose: 'compact' });
    expect(compactions.map((r) => r.replyKind)).toEqual(['over_window', 'summary']);
    expect(JSON.stringify(compactions[1]?.body)).not.toContain('qqqqqqqqqq');
    expect(h().llm.requests({ model, purpose: 'step', replyKind: 'over_window' })).toEqual([]);
    expect((await readLog(session)).filter((e) => e.type === 'context/compacted')).toEqual([expect.objectContaining({ turn: 2, throughSeq: 9 })]);
    // The compaction calls are scheduled under ids naming their cut; the step's keeps Temporal's.
    expect(await llmActivityIds(h().client, session.workflowId)).toEqual(['compact-9', 'compact-9-cleared', expect.stringMatching(/^\d+$/)]);
    await endSession(session);
  });
});

describe('what a session compacts against', () => {
  it('is resolved into the input by the library start: the window of the client table, which the worker may not know', async () => {
    const model = `pinned-window-${Date.now()}`;
    const modelWindows = { [`anthropic:${model}`]: { contextWindow: 12_345, maxOutputTokens: 1_000 } };
    const session = await startSession(h().client, { AGENT_TASK_QUEUE: h().env.AGENT_TASK_QUEUE, modelWindows }, { model: `anthropic:${model}`, idleTimeoutMs: 120_000 });
    expect(await runInput(h().client, session.workflowId)).toMatchObject({ contextWindow: 12_345 });
    expect(await session.query(stateQuery)).toMatchObject({ contextWindow: 12_345 });
    await endSession(session);
  });

  it('is pinned in the next run input when the session continues as new: the window the worker table gave, and compactAt', async () => {
    // A model the worker knows, started without a window (as a client that does not resolve it would).
    const model = 'claude-opus-4-5';
    h().llm.script(model, { kind: 'tool_calls', calls: [{ name: 'calculator', input: { expression: '1+1' } }] }, { kind: 'text', text: 'two' });
    const session = await h().client.workflow.start(SESSION_WORKFLOW, {
      taskQueue: h().env.AGENT_TASK_QUEUE,
      workflowId: `pinned-can-${Date.now()}`,
      args: [{ model: `anthropic:${model}`, continueAsNewAfterEvents: 20, idleTimeoutMs: 120_000 } satisfies SessionInput],
    });
    expect(await runInput(h().client, session.workflowId, session.firstExecutionRunId)).not.toHaveProperty('contextWindow');
    expect(await sendAndWait(session, 'what is 1+1?')).toMatchObject({ status: 'completed' });
    const next = await eventually('the next run', async () => {
      const { runId } = await h().client.workflow.getHandle(session.workflowId).describe();
      return runId === session.firstExecutionRunId ? undefined : runId;
    });
    expect(await runInput(h().client, session.workflowId, next)).toMatchObject({ contextWindow: 200_000, compactAt: 0.75 });
    await endSession(h().client.workflow.getHandle(session.workflowId));
  });
});

describe('a message sent while the compaction before continue-as-new runs', () => {
  it('is answered even when that compaction fails: the session decides its next move again instead of continuing as new at once', async () => {
    const model = `compact-queued-${Date.now()}`;
    // A tail of 1.6 MB: above what a run carries without compacting first.
    // A turn with a tool call: its history alone passes continueAsNewAfterEvents.
    h().llm.script(model, { kind: 'tool_calls', calls: [{ name: 'calculator', input: { expression: '1+1' } }] }, { kind: 'text', text: 'first' }, { kind: 'text', text: 'answered meanwhile' });
    h().llm.scriptCompaction(model, { kind: 'status', status: 400, hold: true }, { kind: 'text', text: 'a summary' });
    const session = await startSession(h().client, h().env, {
      model: `anthropic:${model}`,
      continueAsNewAfterEvents: 20,
      idleTimeoutMs: 120_000,
      fork: { fromWorkflowId: 'an-old-session', events: turnThatRead('x'.repeat(1_600_000)) },
    });
    expect(await sendAndWait(session, 'one more')).toMatchObject({ status: 'completed', turn: 2 });

    await h().llm.waitForRequests(1, { model, purpose: 'compact' }, 30_000);
    const meanwhile = sendAndWait(session, 'sent during the compaction');
    await eventually('the message queued', async () => ((await session.query(stateQuery)).queued === 1 ? true : undefined));
    h().llm.release(model);

    expect(await meanwhile).toMatchObject({ status: 'completed', turn: 3 });
    // After that turn the session compacts again (a new cut) and continues as new.
    const latest = await eventually('the next run', async () => {
      const state = await h().client.workflow.getHandle(session.workflowId).query(stateQuery);
      return state.runs === 2 ? state : undefined;
    });
    expect(latest.firstSeq).toBeGreaterThan(0);
    expect(h().llm.requests({ model, purpose: 'compact' }).map((r) => r.replyKind)).toEqual(['status', 'text']);
    await endSession(session);
  });
});

describe('the compaction before continue-as-new', () => {
  it('is judged on the whole next run input: a tail under 1 MiB with a large system prompt is compacted first', async () => {
    const model = `carry-measure-${Date.now()}`;
    h().llm.script(model, { kind: 'tool_calls', calls: [{ name: 'calculator', input: { expression: '1+1' } }] }, { kind: 'text', text: 'two' });
    // A tail of about 0.97 MB and a system prompt of 0.1 MB: together above 1 MiB.
    const session = await startSession(h().client, h().env, {
      model: `anthropic:${model}`,
      system: 'S'.repeat(100_000),
      continueAsNewAfterEvents: 20,
      idleTimeoutMs: 120_000,
      fork: { fromWorkflowId: 'an-old-session', events: turnThatRead('x'.repeat(960_000)) },
    });
    expect(await sendAndWait(session, 'what is 1+1?')).toMatchObject({ status: 'completed' });
    const state = await eventually('the next run', async () => {
      const s = await h().client.workflow.getHandle(session.workflowId).query(stateQuery);
      return s.runs === 2 ? s : undefined;
    });
    expect(h().llm.requests({ model, purpose: 'compact' })).toHaveLength(1);
    expect(state.firstSeq).toBeGreaterThan(10);
    await endSession(session);
  });
});

describe('a compaction and the budget', () => {
  it('refuses the step call after a compaction that spent past a hard limit: the turn fails budget_exceeded and no step request goes out', async () => {
    const model = `compact-budget-${Date.now()}`;
    h().llm.setContextWindow(model, 8_000);
    h().llm.scriptCompaction(model, { kind: 'text', text: 'a costly summary', usage: { inputTokens: 100_000, outputTokens: 5 } });
    h().llm.script(model, { kind: 'text', text: 'never sent' });
    const session = await startSession(h().client, h().env, {
      model: `anthropic:${model}`,
      contextWindow: 8_000,
      budgetTokens: 50_000,
      idleTimeoutMs: 120_000,
      fork: { fromWorkflowId: 'a-session-that-read-a-big-file', events: turnThatRead('q'.repeat(28_000)) },
    });
    const outcome = await sendAndWait(session, 'what was in it?');
    expect(outcome).toMatchObject({ status: 'failed', failure: { type: 'budget_exceeded' } });
    expect(h().llm.requests({ model, purpose: 'compact' })).toHaveLength(1);
    expect(h().llm.requests({ model, purpose: 'step' })).toEqual([]);
    await endSession(session);
  });

  it('skips the compaction before continue-as-new once a hard limit is reached, and carries the tail as it is', async () => {
    const model = `carry-budget-${Date.now()}`;
    h().llm.script(
      model,
      { kind: 'tool_calls', calls: [{ name: 'calculator', input: { expression: '1+1' } }], usage: { inputTokens: 10, outputTokens: 2 } },
      { kind: 'text', text: 'two', usage: { inputTokens: 400_000, outputTokens: 5 } },
    );
    // A tail of 1.2 MB: above what a run carries without compacting first, under what it can carry.
    const session = await startSession(h().client, h().env, {
      model: `anthropic:${model}`,
      budgetTokens: 600_000,
      continueAsNewAfterEvents: 20,
      idleTimeoutMs: 120_000,
      fork: { fromWorkflowId: 'an-old-session', events: turnThatRead('x'.repeat(1_200_000)) },
    });
    expect(await sendAndWait(session, 'what is 1+1?')).toMatchObject({ status: 'completed' });
    const state = await eventually('the next run', async () => {
      const s = await h().client.workflow.getHandle(session.workflowId).query(stateQuery);
      return s.runs === 2 ? s : undefined;
    });
    expect(state.firstSeq).toBe(0);
    expect(h().llm.requests({ model, purpose: 'compact' })).toEqual([]);
    await endSession(session);
  });
});

describe('a step whose request would leave the answer too little room', () => {
  it('compacts first, though the request is under compactAt of the window', async () => {
    const model = `answer-room-${Date.now()}`;
    h().llm.script(model, { kind: 'text', text: 'room enough' });
    // About 5 000 tokens of a 10 000-token window: under 0.75 of it, but 5 000 + 6 000 passes it.
    const session = await startSession(h().client, h().env, {
      model: `anthropic:${model}`,
      contextWindow: 10_000,
      maxTokens: 6_000,
      idleTimeoutMs: 120_000,
      fork: { fromWorkflowId: 'a-session-that-read-a-file', events: turnThatRead('q'.repeat(20_000)) },
    });
    expect(await sendAndWait(session, 'what was in it?')).toMatchObject({ status: 'completed' });
    expect(h().llm.requests({ model, purpose: 'compact' })).toHaveLength(1);
    await endSession(session);
  });
});

describe('a fork at a seq below 0', () => {
  it('is refused in one line, before the source is asked anything', async () => {
    await expect(forkSession(h().client, h().env, 'no-such-session', { atSeq: -1 })).rejects.toThrow(/^atSeq must be the seq of an event of the source, 0 or more \(got -1\)$/);
  });
});

describe('a fork of a compacted session', () => {
  it('is given the source counts at the cut, not counts of the tail it carries', async () => {
    const model = `fork-counts-${Date.now()}`;
    h().llm.setContextWindow(model, 8_000);
    h().llm.script(model, { kind: 'text', text: 'ok' });
    const source = await startSession(h().client, h().env, {
      model: `anthropic:${model}`,
      contextWindow: 8_000,
      idleTimeoutMs: 120_000,
      fork: { fromWorkflowId: 'a-session-that-read-a-file', events: turnThatRead('q'.repeat(28_000)) },
    });
    expect(await sendAndWait(source, 'and now?')).toMatchObject({ status: 'completed' });
    const sourceState = await source.query(stateQuery);
    expect(sourceState.stepsTaken).toBe(3);

    const fork = await forkSession(h().client, h().env, source.workflowId);
    // Only the tail after the compaction's cut (the end of turn 1) is carried.
    const carried = await readLog(fork);
    expect(carried[0]).toMatchObject({ seq: 10, type: 'turn/start', turn: 2 });
    expect(carried.filter((e) => e.type === 'context/compacted')).toHaveLength(1);
    const forked = await fork.query(stateQuery);
    expect(forked.stepsTaken).toBe(3);
    expect(forked.spend.inputTokens).toBe(sourceState.spend.inputTokens);
    await endSession(fork);
    await endSession(source);
  });

  it('records the MCP tool list it was given first, so its tools are still offered', async () => {
    const model = `fork-tools-${Date.now()}`;
    h().llm.script(model, { kind: 'text', text: 'ok' });
    const toolsListed = {
      turn: 1,
      servers: ['fs'],
      tools: [{ name: 'mcp__fs__read', server: 'fs', tool: 'read', description: 'Reads.', inputSchema: { type: 'object' }, lane: 'read_only' as const, timeoutMs: 30_000 }],
    };
    const compaction = { type: 'context/compacted', seq: 11, at: 0, turn: 1, throughSeq: 10, summary: 'earlier', tokensBefore: 100, tokensAfter: 10 } as const;
    const session = await startSession(h().client, h().env, {
      model: `anthropic:${model}`,
      idleTimeoutMs: 120_000,
      fork: { fromWorkflowId: 'a-session-with-mcp', events: [compaction], toolsListed, stepsTaken: 9 },
    });
    expect(await sendAndWait(session, 'which tools?')).toMatchObject({ status: 'completed' });
    const log = await readLog(session);
    expect(log[1]).toMatchObject({ type: 'tools/listed', seq: 12, servers: ['fs'] });
    const sent = h().llm.requests({ model }).at(-1)?.body as { tools?: { name: string }[] };
    expect(sent.tools?.map((t) => t.name)).toContain('mcp__fs__read');
    expect((await session.query(stateQuery)).stepsTaken).toBe(10);
    await endSession(session);
  });
});

describe('a fork of a fork', () => {
  it('is given the tokens its source used up to the cut, not what the first source spent after its own cut', async () => {
    const model = `fork-of-fork-${Date.now()}`;
    const answer = (inputTokens: number) => ({ kind: 'text' as const, text: 'ok', usage: { inputTokens, outputTokens: 1 } });
    h().llm.script(model, answer(100), answer(1_000), answer(10));
    const first = await startSession(h().client, h().env, { model: `anthropic:${model}`, idleTimeoutMs: 120_000 });
    await sendAndWait(first, 'one');
    const cut = (await readLog(first)).at(-1)?.seq;
    await sendAndWait(first, 'two');
    // The second fork's source carries the first session's whole spend (1 100 input tokens), but used only 100 of them by its cut.
    const second = await forkSession(h().client, h().env, first.workflowId, { atSeq: cut });
    await sendAndWait(second, 'three');
    const third = await forkSession(h().client, h().env, second.workflowId);
    const state = await third.query(stateQuery);
    expect(state.spend.inputTokens).toBe(1_110);
    expect(state.usage?.inputTokens).toBe(110);
    await Promise.all([first, second, third].map((s) => endSession(s)));
  });
});

describe('what asks about the latest run only', () => {
  it('reads the latest run log and queries no earlier run, as cancel and tools do: the tools a session offers', async () => {
    const model = `latest-run-${Date.now()}`;
    h().llm.script(model, { kind: 'tool_calls', calls: [{ name: 'calculator', input: { expression: '1+1' } }] }, { kind: 'text', text: 'two' });
    const session = await startSession(h().client, h().env, {
      model: `anthropic:${model}`,
      continueAsNewAfterEvents: 20,
      idleTimeoutMs: 120_000,
      fork: { fromWorkflowId: 'an-old-session', events: turnThatRead('x'.repeat(1_600_000)) },
    });
    expect(await sendAndWait(session, 'what is 1+1?')).toMatchObject({ status: 'completed' });
    const state = await eventually('the next run', async () => {
      const s = await h().client.workflow.getHandle(session.workflowId).query(stateQuery);
      return s.runs === 2 ? s : undefined;
    });

    // The same client, recording which runs it is asked to reach.
    const runsAsked = new Set<string | undefined>();
    const workflows = h().client.workflow;
    const client = new Proxy(workflows, {
      get: (target, key) =>
        key === 'getHandle'
          ? (workflowId: string, runId?: string) => {
              runsAsked.add(runId);
              return target.getHandle(workflowId, runId);
            }
          : Reflect.get(target, key),
    });
    const handle = { workflowId: session.workflowId, client, query: session.query.bind(session) } as unknown as SessionHandle;

    const { events } = await readLatestRunLog(handle);
    expect(events[0]?.seq).toBe(state.firstSeq);
    expect(events.at(-1)?.seq).toBe(state.events - 1);
    expect((await sessionTools(handle)).map((t) => t.name)).toContain('calculator');
    expect(runsAsked.has(session.firstExecutionRunId)).toBe(false);
    await endSession(session);
  });
});
