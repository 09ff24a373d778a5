import { Context } from '@temporalio/activity';
import { ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import { WorkflowUpdateStage } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { forkSession, readLog, sendAndWait, startSession, turnOutcomeOf } from '../client/sessions';
import { cancelTurnUpdate, sendUpdate, type SessionInput } from '../contracts/api';
import type { SessionEvent } from '../contracts/session-log';
import type { RunToolRequest, ToolOutcome } from '../contracts/tools/tool-outcome';
import { useAgentHarness } from './support/agent-harness';
import { unpairedToolCalls } from './support/pairing';
import { barrier, within } from './support/barrier';
import { eventually } from './support/eventually';
import { untilCancelled } from './support/tool-stubs';

/** What the stubbed tool activity saw, and how each call behaves, keyed by call id. */
const dispatched: { callId: string; at: number }[] = [];
const behaviours = new Map<string, (req: RunToolRequest) => Promise<ToolOutcome>>();

async function runTool(req: RunToolRequest): Promise<ToolOutcome> {
  dispatched.push({ callId: req.callId, at: Date.now() });
  const behaviour = behaviours.get(req.callId);
  return behaviour ? behaviour(req) : { code: 'ok', content: `ran ${req.name}` };
}

const h = useAgentHarness({ runTool });

let models = 0;
function newModel(name: string): { ref: string; model: string } {
  const model = `step-${name}-${++models}-${Date.now()}`;
  return { ref: `anthropic:${model}`, model };
}

function start(input: Partial<SessionInput> & { model: string }) {
  return startSession(h().client, h().env, { idleTimeoutMs: 120_000, ...input });
}

const results = (events: SessionEvent[], turn: number) =>
  events.filter((e) => e.type === 'tool/result' && e.turn === turn).map((e) => (e.type === 'tool/result' ? [e.callId, e.code] : []));

const POST = { method: 'POST', url: 'http://127.0.0.1:9/orders', body: '{}' };

describe('a step that fails after its assistant message asked for tools', () => {
  it('records ok, TOOL_OUTCOME_UNKNOWN and TOOL_NOT_STARTED in call order when a side-effecting call times out, dispatches nothing after, and reports the timeout', async () => {
    const { ref, model } = newModel('timeout');
    h().llm.script(
      model,
      {
        kind: 'tool_calls',
        calls: [
          { id: 'toolu_t1', name: 'calculator', input: { expression: '1+1' } },
          { id: 'toolu_t2', name: 'http_request', input: POST },
          { id: 'toolu_t3', name: 'calculator', input: { expression: '2*3' } },
        ],
      },
      { kind: 'text', text: 'The order may or may not have been placed.' },
    );
    // Answers only once the server has timed it out: a call that outlasts its limit, by order.
    behaviours.set('toolu_t2', async () => {
      await sessionHistoryShows((e) => e.activityTaskTimedOutEventAttributes != null);
      return { code: 'ok', content: 'too late' };
    });
    const session = await start({ model: ref, toolTimeouts: { http_request: 1_000 } });
    const turn = await sendAndWait(session, 'place the order');

    expect(turn.status).toBe('failed');
    expect(turn.failure?.type).toBe('start_to_close_timeout');
    const events = await readLog(session);
    expect(results(events, 1)).toEqual([
      ['toolu_t1', 'ok'],
      ['toolu_t2', 'TOOL_OUTCOME_UNKNOWN'],
      ['toolu_t3', 'TOOL_NOT_STARTED'],
    ]);
    const unknown = events.find((e) => e.type === 'tool/result' && e.code === 'TOOL_OUTCOME_UNKNOWN');
    expect(unknown?.type === 'tool/result' && unknown.content).toMatch(/Do not blindly retry/);
    const tail = events.slice(-2).map((e) => [e.type, 'status' in e ? e.status : undefined, 'failure' in e ? e.failure?.type : undefined]);
    expect(tail).toEqual([
      ['step/end', 'failed', 'start_to_close_timeout'],
      ['turn/end', 'failed', 'start_to_close_timeout'],
    ]);
    // Nothing is dispatched after the failure, then or later: once the next turn has run on
    // the same session, history holds every tool activity the session ever scheduled.
    expect((await sendAndWait(session, 'did it go through?')).status).toBe('completed');
    expect(await scheduledToolCalls(session.workflowId)).toEqual(['toolu_t1', 'toolu_t2']);
    expect(dispatched.map((d) => d.callId).filter((id) => id.startsWith('toolu_t'))).toEqual(['toolu_t1', 'toolu_t2']);

  });

  it('sends the next turn a conversation in which every tool call of the failed turn has its result', async () => {
    const { ref, model } = newModel('next-turn');
    h().llm.script(
      model,
      { kind: 'tool_calls', calls: [{ id: 'toolu_n1', name: 'http_request', input: POST }, { id: 'toolu_n2', name: 'calculator', input: { expression: '1' } }] },
      { kind: 'text', text: 'I could not confirm the order; please check it.' },
    );
    behaviours.set('toolu_n1', async () => {
      await sessionHistoryShows((e) => e.activityTaskTimedOutEventAttributes != null);
      return { code: 'ok', content: 'too late' };
    });
    const session = await start({ model: ref, toolTimeouts: { http_request: 1_000 } });
    expect((await sendAndWait(session, 'order')).status).toBe('failed');

    expect((await sendAndWait(session, 'what happened?')).status).toBe('completed');
    const [request] = h().llm.requests({ model }).slice(-1);
    expect(unpairedToolCalls(request?.body)).toEqual([]);
    const body = JSON.stringify(request?.body);
    expect(body).toContain('TOOL_OUTCOME_UNKNOWN');
    expect(body).toContain('TOOL_NOT_STARTED');
  });

  it('drains a read-only call in flight when another fails, and keeps its result', async () => {
    const { ref, model } = newModel('drain');
    h().llm.script(model, {
      kind: 'tool_calls',
      calls: [
        { id: 'toolu_d1', name: 'calculator', input: { expression: '1+1' } },
        { id: 'toolu_d2', name: 'calculator', input: { expression: '2+2' } },
        { id: 'toolu_d3', name: 'calculator', input: { expression: '3+3' } },
      ],
    });
    // d1 is still running when d2 fails: it returns only once the server has d2's failure.
    behaviours.set('toolu_d1', async () => {
      await sessionHistoryShows((e) => e.activityTaskFailedEventAttributes !== undefined && e.activityTaskFailedEventAttributes !== null);
      return { code: 'ok', content: '2' };
    });
    behaviours.set('toolu_d2', async () => {
      throw ApplicationFailure.create({ type: 'disk_on_fire', message: 'the worker disk is gone', nonRetryable: true });
    });
    const session = await start({ model: ref, toolConcurrency: 2 });
    const turn = await sendAndWait(session, 'add things');

    expect(turn.status).toBe('failed');
    // A type outside the catalogue is reported as internal_error, naming the original type.
    expect(turn.failure?.type).toBe('internal_error');
    expect(turn.failure?.message).toContain('disk_on_fire: the worker disk is gone');
    const events = await readLog(session);
    expect(results(events, 1)).toEqual([
      ['toolu_d1', 'ok'],
      ['toolu_d2', 'TOOL_OUTCOME_UNKNOWN'],
      ['toolu_d3', 'TOOL_NOT_STARTED'],
    ]);
    const kept = events.find((e) => e.type === 'tool/result' && e.callId === 'toolu_d1');
    expect(kept?.type === 'tool/result' && kept.content).toBe('2');
    expect(dispatched.some((d) => d.callId === 'toolu_d3')).toBe(false);
  });

  it('gives a cancelled turn the same compensation and reports it as cancelled', async () => {
    const { ref, model } = newModel('cancel');
    h().llm.script(model, {
      kind: 'tool_calls',
      calls: [
        { id: 'toolu_c1', name: 'calculator', input: { expression: '1+1' } },
        { id: 'toolu_c2', name: 'http_request', input: POST },
      ],
    });
    const c1Started = barrier();
    behaviours.set('toolu_c1', () => {
      c1Started.open();
      return untilCancelled();
    });
    const session = await start({ model: ref });
    const update = await session.startUpdate(sendUpdate, { args: [{ text: 'go' }], waitForStage: WorkflowUpdateStage.ACCEPTED });
    await within(c1Started.wait(), 'toolu_c1 to start');
    const cancel = await session.executeUpdate(cancelTurnUpdate);
    expect(cancel).toEqual({ cancelled: true, turn: 1 });

    const outcome = await update.result().then(
      () => undefined,
      (error: unknown) => turnOutcomeOf(error),
    );
    expect(outcome?.status).toBe('cancelled');
    expect(outcome?.failure?.type).toBe('cancelled');
    const events = await readLog(session);
    expect(results(events, 1)).toEqual([
      ['toolu_c1', 'TOOL_OUTCOME_UNKNOWN'],
      ['toolu_c2', 'TOOL_NOT_STARTED'],
    ]);
    expect(events.slice(-2).map((e) => [e.type, 'status' in e ? e.status : undefined])).toEqual([
      ['step/end', 'cancelled'],
      ['turn/end', 'cancelled'],
    ]);
    expect(dispatched.some((d) => d.callId === 'toolu_c2')).toBe(false);
  });
});

describe('the tool scheduler', () => {
  it('runs read-only calls in parallel up to the limit, and a side-effecting call alone, after everything before it, in call order', async () => {
    const { ref, model } = newModel('concurrency');
    const ids = ['toolu_p1', 'toolu_p2', 'toolu_p3', 'toolu_p4', 'toolu_p5'];
    h().llm.script(
      model,
      {
        kind: 'tool_calls',
        calls: [
          { id: 'toolu_p1', name: 'calculator', input: { expression: '1' } },
          { id: 'toolu_p2', name: 'calculator', input: { expression: '2' } },
          { id: 'toolu_p3', name: 'calculator', input: { expression: '3' } },
          { id: 'toolu_p4', name: 'http_request', input: POST },
          { id: 'toolu_p5', name: 'calculator', input: { expression: '5' } },
        ],
      },
      { kind: 'text', text: 'done' },
    );
    // p1 and p2 each wait until the other has started: they finish only if they run at once.
    const started = new Map(ids.map((id) => [id, barrier()]));
    const ended = new Set<string>();
    /** What had ended when each call started. */
    const endedBefore = new Map<string, string[]>();
    for (const id of ids) {
      behaviours.set(id, async () => {
        endedBefore.set(id, [...ended]);
        started.get(id)?.open();
        const partner = id === 'toolu_p1' ? 'toolu_p2' : id === 'toolu_p2' ? 'toolu_p1' : undefined;
        if (partner) await within(started.get(partner)!.wait(), `${partner} to start while ${id} runs`);
        ended.add(id);
        return { code: 'ok', content: id };
      });
    }
    const session = await start({ model: ref, toolConcurrency: 2 });
    expect((await sendAndWait(session, 'go')).status).toBe('completed');
    expect(endedBefore.get('toolu_p1')).toEqual([]);
    expect(endedBefore.get('toolu_p2')).toEqual([]);
    // p3 waited for a free slot; the side-effecting p4 for everything before it; p5 for p4.
    expect(endedBefore.get('toolu_p3')?.some((id) => id === 'toolu_p1' || id === 'toolu_p2')).toBe(true);
    expect(endedBefore.get('toolu_p4')).toEqual(expect.arrayContaining(['toolu_p1', 'toolu_p2', 'toolu_p3']));
    expect(endedBefore.get('toolu_p5')).toContain('toolu_p4');
  });

  it('gives the model the results in the assistant\'s call order, whatever order they finished in', async () => {
    const { ref, model } = newModel('order');
    h().llm.script(
      model,
      {
        kind: 'tool_calls',
        calls: [
          { id: 'toolu_o1', name: 'calculator', input: { expression: '1' } },
          { id: 'toolu_o2', name: 'calculator', input: { expression: '2' } },
        ],
      },
      { kind: 'text', text: 'done' },
    );
    // o1 finishes only once o2's result is in the log.
    behaviours.set('toolu_o1', async () => {
      await sessionLogShows((e) => e.type === 'tool/result' && e.callId === 'toolu_o2');
      return { code: 'ok', content: 'slow' };
    });
    const session = await start({ model: ref });
    expect((await sendAndWait(session, 'go')).status).toBe('completed');
    const recorded = (await readLog(session)).flatMap((e) => (e.type === 'tool/result' ? [e.callId] : []));
    expect(recorded).toEqual(['toolu_o2', 'toolu_o1']);
    const [request] = h().llm.requests({ model }).slice(-1);
    const sent = JSON.stringify(request?.body);
    expect(sent.indexOf('toolu_o1')).toBeLessThan(sent.indexOf('toolu_o2'));
    const lastUser = (request?.body as { messages: { content: { type: string; tool_use_id?: string }[] }[] }).messages.at(-1);
    expect(lastUser?.content.map((b) => b.tool_use_id)).toEqual(['toolu_o1', 'toolu_o2']);
  });
});

describe('fork', () => {
  it('repairs an open tail when the cut falls inside a step, and leaves a closed log unchanged', async () => {
    const { ref, model } = newModel('fork');
    h().llm.script(
      model,
      {
        kind: 'tool_calls',
        calls: [
          { id: 'toolu_f1', name: 'calculator', input: { expression: '1+1' } },
          { id: 'toolu_f2', name: 'calculator', input: { expression: '2+2' } },
        ],
      },
      { kind: 'text', text: '2 and 4' },
    );
    const source = await start({ model: ref });
    expect((await sendAndWait(source, 'add')).status).toBe('completed');
    const sourceLog = await readLog(source);

    const whole = await forkSession(h().client, h().env, source.workflowId);
    expect(stripTimes(await readLog(whole))).toEqual(stripTimes(sourceLog));

    const firstCall = sourceLog.find((e) => e.type === 'tool/call');
    const cut = await forkSession(h().client, h().env, source.workflowId, { atSeq: firstCall?.seq ?? -1 });
    const repaired = await readLog(cut);
    expect(stripTimes(repaired.slice(0, (firstCall?.seq ?? 0) + 1))).toEqual(stripTimes(sourceLog.slice(0, (firstCall?.seq ?? 0) + 1)));
    expect(repaired.slice((firstCall?.seq ?? 0) + 1).map((e) => [e.type, 'code' in e ? e.code : 'status' in e ? e.status : undefined])).toEqual([
      ['tool/result', 'TOOL_OUTCOME_UNKNOWN'],
      ['tool/result', 'TOOL_NOT_STARTED'],
      ['step/end', 'interrupted'],
      ['turn/end', 'interrupted'],
    ]);

    // The repaired fork is a usable session: its next request pairs every call.
    h().llm.script(model, { kind: 'text', text: 'resumed' });
    expect((await sendAndWait(cut, 'go on')).status).toBe('completed');
    const [request] = h().llm.requests({ model }).slice(-1);
    expect(unpairedToolCalls(request?.body)).toEqual([]);
  });
});

function stripTimes(events: SessionEvent[]) {
  return events.map(({ at: _at, ...rest }) => rest);
}

/** The call ids of the tool activities a session's history has scheduled, in order. */
async function scheduledToolCalls(workflowId: string): Promise<string[]> {
  const events = (await h().client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  return events.flatMap((e) => {
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name !== 'runTool') return [];
    const [request] = (scheduled.input?.payloads ?? []).map((p) => defaultPayloadConverter.fromPayload<RunToolRequest>(p));
    return request ? [request.callId] : [];
  });
}

/** Inside a tool activity: resolves once the server's history of its session has an event matching `found`. */
async function sessionHistoryShows(found: (e: NonNullable<Awaited<ReturnType<typeof fetchOwnHistory>>>[number]) => boolean): Promise<void> {
  await eventually('the session history to show the awaited event', async () => ((await fetchOwnHistory()).some(found) ? true : undefined), 10_000, 50);
}
async function fetchOwnHistory() {
  const run = Context.current().info.workflowExecution;
  return (await h().client.workflow.getHandle(run?.workflowId ?? '').fetchHistory()).events ?? [];
}

/** Inside a tool activity: resolves once its session's log has an event matching `found`. */
async function sessionLogShows(found: (e: SessionEvent) => boolean): Promise<void> {
  const run = Context.current().info.workflowExecution;
  await eventually('the session log to show the awaited event', async () => ((await readLog(h().client.workflow.getHandle(run?.workflowId ?? ''))).some(found) ? true : undefined), 10_000, 50);
}
