import { WorkflowUpdateStage } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { endSession, forkSession, readLog, sendAndWait, startSession } from '../client/sessions';
import { endUpdate, sendUpdate, type SessionInput } from '../contracts/api';
import { useAgentHarness } from './support/agent-harness';
import { AgentModel, AgentStatus, AgentStepCount } from '../contracts/search-attributes';

const h = useAgentHarness();

let n = 0;
function model(name: string) {
  const m = `session-${name}-${++n}-${Date.now()}`;
  return { ref: `anthropic:${m}`, model: m };
}
const start = (input: Partial<SessionInput> & { model: string }) => startSession(h().client, h().env, { idleTimeoutMs: 120_000, ...input });

describe('an agent session', () => {
  it('answers invalid arguments, unknown tools and tool-reported errors with error results the model reads, and goes on', async () => {
    const { ref, model: m } = model('model-mistakes');
    h().llm.script(
      m,
      {
        kind: 'tool_calls',
        calls: [
          { id: 'toolu_m1', name: 'teleport', input: { to: 'mars' } },
          { id: 'toolu_m2', name: 'calculator', rawArguments: '{"expression": "1+' },
          { id: 'toolu_m3', name: 'calculator', input: { formula: '1+1' } },
          { id: 'toolu_m4', name: 'calculator', input: { expression: '1/0' } },
          { id: 'toolu_m5', name: 'read_file', input: { path: 'no-such-file.txt' } },
        ],
      },
      { kind: 'text', text: 'Sorry, let me fix those.' },
    );
    const session = await start({ model: ref });
    const turn = await sendAndWait(session, 'do things');
    expect(turn.status).toBe('completed');
    // The two calls that run (1/0, the missing file) run at once and are logged as they finish: compared by call id.
    const results = (await readLog(session)).flatMap((e) => (e.type === 'tool/result' ? [[e.callId, e.code, e.content]] : [])).sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    expect(results.map(([id, code]) => [id, code])).toEqual([
      ['toolu_m1', 'error'],
      ['toolu_m2', 'error'],
      ['toolu_m3', 'error'],
      ['toolu_m4', 'error'],
      ['toolu_m5', 'error'],
    ]);
    expect(results[0]?.[2]).toMatch(/no tool named "teleport"/);
    expect(results[1]?.[2]).toMatch(/not a valid JSON object/);
    expect(h().llm.requests({ model: m })).toHaveLength(2);
  });

  it('stops a turn that keeps asking for tools at the step limit, as completed with reason step_limit', async () => {
    const { ref, model: m } = model('step-limit');
    const call = { kind: 'tool_calls' as const, calls: [{ name: 'calculator', input: { expression: '1+1' } }] };
    h().llm.script(m, call, call, call);
    const session = await start({ model: ref, maxSteps: 2 });
    expect(await sendAndWait(session, 'loop')).toMatchObject({ status: 'completed' });
    const events = await readLog(session);
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', status: 'completed', reason: 'step_limit' });
    expect(events.filter((e) => e.type === 'step/start')).toHaveLength(2);
    expect(h().llm.requests({ model: m })).toHaveLength(2);
  });

  it('publishes its status and step count to visibility when a turn starts and ends, not at every step', async () => {
    const { ref, model: m } = model('status-per-turn');
    const call = { kind: 'tool_calls' as const, calls: [{ name: 'calculator', input: { expression: '1+1' } }] };
    h().llm.script(m, call, call, { kind: 'text', text: '2, twice.' });
    const session = await start({ model: ref });
    expect(await sendAndWait(session, 'add twice')).toMatchObject({ status: 'completed' });
    const { events } = await session.fetchHistory();
    const published = (events ?? []).flatMap((e) => {
      const fields = e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {};
      const status = fields.AgentStatus?.data;
      const steps = fields.AgentStepCount?.data;
      return status && steps ? [[decoded(status), decoded(steps)]] : [];
    });
    // When the turn starts and when it ends with its three steps; the start's `idle` came with the start request.
    expect(published).toEqual([
      ['running', 0],
      ['idle', 3],
    ]);
    const started = events?.[0]?.workflowExecutionStartedEventAttributes?.searchAttributes?.indexedFields ?? {};
    expect(Object.fromEntries(Object.entries(started).map(([key, payload]) => [key, decoded(payload.data as Uint8Array)]))).toMatchObject({ AgentStatus: 'idle', AgentStepCount: 0, AgentModel: ref });
    const shown = (await session.describe()).typedSearchAttributes;
    expect([shown.get(AgentStatus), shown.get(AgentStepCount), shown.get(AgentModel)]).toEqual(['idle', 3, ref]);
  });

  it('ends by itself after its idle timeout, but never while a turn runs', async () => {
    const { ref, model: m } = model('idle');
    h().llm.script(m, { kind: 'text', text: 'slow answer', delayMs: 2_500 });
    const session = await start({ model: ref, idleTimeoutMs: 1_000 });
    expect((await sendAndWait(session, 'take your time')).status).toBe('completed');
    await expect(session.result()).resolves.toMatchObject({ turns: 1, endedBy: 'idle_timeout' });
  });

  it('ends on request only after the running turn has ended, and refuses new messages meanwhile', async () => {
    const { ref, model: m } = model('end');
    h().llm.script(m, { kind: 'text', text: 'finishing', delayMs: 1_500 });
    const session = await start({ model: ref });
    const turn = await session.startUpdate(sendUpdate, { args: [{ text: 'one' }], waitForStage: WorkflowUpdateStage.ACCEPTED });
    await h().llm.waitForRequests(1, { model: m });
    await session.executeUpdate(endUpdate);
    await expect(session.executeUpdate(sendUpdate, { args: [{ text: 'two' }] })).rejects.toMatchObject({
      cause: { message: expect.stringMatching(/session is ending/) },
    });
    await expect(turn.result()).resolves.toMatchObject({ status: 'completed' });
    await expect(session.result()).resolves.toMatchObject({ turns: 1, endedBy: 'request' });
  });

  it('closes the open tail of a session terminated mid-step when it is forked, marked interrupted', async () => {
    const { ref, model: m } = model('terminated');
    h().llm.script(m, { kind: 'text', text: 'never arrives', stall: { ms: -1, pingEveryMs: 200 } });
    const source = await start({ model: ref });
    await source.startUpdate(sendUpdate, { args: [{ text: 'hello' }], waitForStage: WorkflowUpdateStage.ACCEPTED });
    await h().llm.waitForRequests(1, { model: m });
    await source.terminate('operator pulled the plug');

    const fork = await forkSession(h().client, h().env, source.workflowId);
    const events = await readLog(fork);
    expect(events.map((e) => [e.type, 'status' in e ? e.status : undefined])).toEqual([
      ['turn/start', undefined],
      ['step/start', undefined],
      ['step/end', 'interrupted'],
      ['turn/end', 'interrupted'],
    ]);
    h().llm.script(m, { kind: 'text', text: 'back again' });
    expect((await sendAndWait(fork, 'are you there?')).status).toBe('completed');
    await endSession(fork);
  });

  it('rejects an empty message before it reaches history', async () => {
    const { ref } = model('empty');
    const session = await start({ model: ref });
    await expect(session.executeUpdate(sendUpdate, { args: [{ text: '   ' }] })).rejects.toMatchObject({
      cause: { message: expect.stringMatching(/invalid message: text: a message must not be empty/) },
    });
    const history = await session.fetchHistory();
    expect(history.events?.some((e) => e.workflowExecutionUpdateAcceptedEventAttributes)).toBe(false);
    await endSession(session);
  });
});

/** A search attribute's value as history records it: JSON in the payload's data. */
function decoded(data: Uint8Array): unknown {
  return JSON.parse(Buffer.from(data).toString('utf8'));
}
