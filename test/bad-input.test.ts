/**
 * Bad input from every side (the caller, the model, the wire, a tool, sheer size) must
 * produce a clear error or an ordinary result: nothing lost, and never a workflow task
 * that retries forever. Each case checks what history recorded, not only what the caller saw.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLog, sendAndWait, startSession, type SessionHandle } from '../client/sessions';
import { SESSION_WORKFLOW, stateQuery, type SessionInput } from '../contracts/api';
import type { SessionEvent } from '../contracts/session-log';
import type { RunToolRequest, ToolOutcome } from '../contracts/tools/tool-outcome';
import { startLocalAgent, type LocalAgent } from '../harness/local-agent';
import { DEFAULT_DYNAMIC_CONFIG, findFreePort, startDevServer, type DevServer } from '../harness/dev-server';
import { useAgentHarness } from './support/agent-harness';
import { eventually } from './support/eventually';
import { unpairedToolCalls } from './support/pairing';

// Failed attempts are what this file causes on purpose, hundreds of them: keep the worker's
// WARN line for each out of the report. Errors still show. (Before the harness installs its own.)
Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, console: {} } } });

/** A stub tool activity: `read_file` of `huge.txt` answers with 3 MB, of `big-*` with 900 KB, everything else with a short text. */
const HUGE_BYTES = 3 * 1024 * 1024;
/** Below the 1 MiB the real tools cap their results at, and below the payload limit: three of them are not. */
const BIG_BYTES = 900 * 1024;
const HISTORY_COUNT_LIMIT = 300;
/** A refusal is read by a person: however bad the input, its message stays a line, not a dump of it. */
const MAX_REFUSAL_CHARS = 2_000;
/** Well past HISTORY_COUNT_LIMIT: one echo turn writes about 15 events. */
const LONG_SESSION_TURNS = 40;
const dispatched: RunToolRequest[] = [];
async function runTool(request: RunToolRequest): Promise<ToolOutcome> {
  dispatched.push(request);
  const input = request.input as { path?: string };
  if (request.name === 'read_file' && input.path === 'huge.txt') return { code: 'ok', content: 'x'.repeat(HUGE_BYTES) };
  if (request.name === 'read_file' && input.path?.startsWith('big-')) return { code: 'ok', content: 'y'.repeat(BIG_BYTES) };
  return { code: 'ok', content: `ran ${request.name}` };
}

const h = useAgentHarness({ runTool });

const PROVIDERS = ['anthropic', 'openai', 'google'] as const;
let n = 0;
const newModel = (name: string) => `bad-${name}-${++n}-${randomUUID().slice(0, 8)}`;
const start = (input: Partial<SessionInput> & { model: string }) => startSession(h().client, h().env, { idleTimeoutMs: 120_000, ...input });

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
async function historyOf(client: Client, workflowId: string): Promise<HistoryEvent[]> {
  return (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
}
const has = (events: HistoryEvent[], attribute: keyof HistoryEvent) => events.some((e) => e[attribute] != null);
const toolResults = (events: SessionEvent[]) => events.flatMap((e) => (e.type === 'tool/result' ? [{ callId: e.callId, name: e.name, code: e.code, content: e.content }] : []));

describe('malformed workflow input (started with the raw client, past the client\'s own validation)', () => {
  it.each<[string, unknown[], RegExp?]>([
    ['no input at all', []],
    ['a string instead of an object', ['hello']],
    ['a model without a provider', [{ model: 'gpt-4o' }]],
    ['an unknown field', [{ model: 'anthropic:x', temperature: 2 }]],
    ['a retry policy out of bounds', [{ model: 'anthropic:x', retryPolicy: { maxRetries: 99, baseDelayMs: 1, maxDelayMs: 1, budgetMs: 1, maxServerWaitMs: 0 } }]],
    ['a thousand wrong tool names', [{ model: 'anthropic:x', tools: Array.from({ length: 1_000 }, () => 'shell') }]],
    // 1.8 MB, inside the payload limit: one issue per entry would be a 66 MB message and seconds of parsing.
    // Each is refused whole, by its length or at its first bad event, never entry by entry.
    ['a list of 900 000 entries of the wrong type', [{ model: 'anthropic:x', approvalRequired: Array.from({ length: 900_000 }, () => 0) }], /^invalid session input: approvalRequired: must list at most 1000 names$/],
    ['a carried log of 900 000 events that are not events', [{ model: 'anthropic:x', continued: { events: Array.from({ length: 900_000 }, () => 0), retryPolicy: 'default', turnsRun: 0, runs: 1 } }], /^invalid session input: continued\.events\.0: [^;]+$/],
    ['a forked log whose one event lists 600 000 empty tools', [{ model: 'anthropic:x', fork: { fromWorkflowId: 'a', events: [{ type: 'tools/listed', seq: 0, at: 0, turn: 0, servers: [], tools: Array.from({ length: 600_000 }, () => ({})) }] } }], /^invalid session input: fork\.events\.0\.tools: Too big: expected array to have <=10000 items$/],
  ])('fails the workflow at once with invalid_input for %s: one workflow task, none failed, no LLM request', async (_name, args, refusal = /^invalid session input: [^\n]+$/) => {
    const workflowId = `bad-input-${randomUUID()}`;
    const requestsBefore = h().llm.requests().length;
    const started = Date.now();
    const handle = await h().client.workflow.start(SESSION_WORKFLOW, { taskQueue: h().taskQueue, workflowId, args });
    // Either the run fails, or a workflow task does (and is retried on and on): whichever shows first.
    const ended = await eventually(
      'the workflow or one of its workflow tasks to fail',
      async () => {
        const events = await historyOf(h().client, workflowId);
        return events.some((e) => e.workflowExecutionFailedEventAttributes || e.workflowTaskFailedEventAttributes || e.workflowTaskTimedOutEventAttributes) ? events : undefined;
      },
      20_000,
    );
    expect(ended.filter((e) => e.workflowTaskFailedEventAttributes || e.workflowTaskTimedOutEventAttributes)).toEqual([]);
    const error = await handle.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const cause = (error as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect(cause).toMatchObject({ type: 'invalid_input', nonRetryable: true, message: expect.stringMatching(refusal) });
    expect((cause as ApplicationFailure).message).not.toMatch(/\n/);
    expect((cause as ApplicationFailure).message.length).toBeLessThanOrEqual(MAX_REFUSAL_CHARS);

    const events = await historyOf(h().client, workflowId);
    expect(events.filter((e) => e.workflowTaskStartedEventAttributes)).toHaveLength(1);
    expect(has(events, 'workflowTaskFailedEventAttributes')).toBe(false);
    expect(has(events, 'workflowExecutionFailedEventAttributes')).toBe(true);
    expect(h().llm.requests().length).toBe(requestsBefore);
  });
});

describe('malformed Update arguments', () => {
  let session: SessionHandle;
  let model: string;
  beforeAll(async () => {
    model = newModel('updates');
    session = await start({ model: `anthropic:${model}` });
    // Until its first workflow task is done, history still grows by itself.
    await eventually('the first workflow task to complete', async () => (has(await historyOf(h().client, session.workflowId), 'workflowTaskCompletedEventAttributes') ? true : undefined));
  });

  it.each<[string, string, unknown[], RegExp]>([
    ['send with an empty text', 'send', [{ text: '   ' }], /a message must not be empty/],
    ['send with a number for text', 'send', [{ text: 42 }], /invalid message: text: /],
    ['send with an unknown field', 'send', [{ text: 'hi', role: 'system' }], /invalid message: .*role/],
    ['send with no argument', 'send', [], /invalid message/],
    ['awaitTurn of a turn that does not exist', 'awaitTurn', [{ turn: 99 }], /no turn 99 in this session/],
    ['awaitTurn with the turn as a string', 'awaitTurn', [{ turn: '1' }], /^invalid turn: turn: /],
    ['awaitTurn with a turn of a megabyte, not echoed', 'awaitTurn', [{ turn: '9'.repeat(1_000_000) }], /^invalid turn: turn: .{0,200}$/],
    ['cancelTurn with an argument it does not take', 'cancelTurn', [{ turn: 1 }], /^cancelTurn takes no argument$/],
    ['end with an argument it does not take', 'end', [{ force: true }], /^end takes no argument$/],
    ['refreshTools with an argument it does not take', 'refreshTools', [{ servers: ['fs'] }], /^refreshTools takes no argument$/],
    ['setRetryPolicy out of bounds', 'setRetryPolicy', [{ maxRetries: 99, baseDelayMs: 100, maxDelayMs: 100, budgetMs: 1_000, maxServerWaitMs: 0 }], /maxRetries must be at most 10/],
    ['decideApproval with approved as a string', 'decideApproval', [{ callId: 'toolu_x', approved: 'yes' }], /invalid approval decision: approved: /],
    ['decideApproval for a call nobody waits for', 'decideApproval', [{ callId: 'toolu_x', approved: true }], /no tool call toolu_x is waiting for approval/],
  ])('rejects %s in its validator, naming the problem, with nothing written to history', async (_name, update, args, message) => {
    const before = await historyOf(h().client, session.workflowId);
    // By name and untyped, as any caller could send it: the client's own types would refuse these.
    const raw = h().client.workflow.getHandle(session.workflowId);
    const error = await raw.executeUpdate<unknown, [unknown]>(update, { args: args as [unknown] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
    expect((error as WorkflowUpdateFailedError).cause?.message).toMatch(message);
    const after = await historyOf(h().client, session.workflowId);
    expect(has(after, 'workflowExecutionUpdateAcceptedEventAttributes')).toBe(false);
    // A rejection leaves no trace at all: not even a workflow task (it was speculative).
    expect(after.length).toBe(before.length);
  });

  it('still takes a valid message afterwards, and the model never saw the rejected ones', async () => {
    h().llm.script(model, { kind: 'text', text: 'hello' });
    expect(await sendAndWait(session, 'a proper message')).toEqual({ status: 'completed', turn: 1, reason: 'answered' });
    expect(h().llm.requests({ model })).toHaveLength(1);
    const events = await readLog(session);
    expect(events.filter((e) => e.type === 'turn/start').map((e) => e.type === 'turn/start' && e.text)).toEqual(['a proper message']);
  });
});

/** Several frames long, so the bad frame lands mid-stream on every wire format (Gemini ends a one-frame reply in that frame). */
const GARBLED = 'this reply is cut by a bad frame';

describe.each(PROVIDERS)('bad model output on %s', (provider) => {
  it('answers tool arguments that are not JSON with an error result quoting them, dispatches nothing, and lets the model try again', async () => {
    const model = newModel(`json-${provider}`);
    h().llm.script(
      model,
      { kind: 'tool_calls', calls: [{ name: 'calculator', rawArguments: '{"expression": 6*7' }] },
      { kind: 'tool_calls', calls: [{ name: 'calculator', input: { expression: '6*7' } }] },
      { kind: 'text', text: 'It is 42.' },
    );
    const session = await start({ model: `${provider}:${model}` });
    const before = dispatched.length;
    expect(await sendAndWait(session, 'what is 6*7?')).toEqual({ status: 'completed', turn: 1, reason: 'answered' });
    const results = toolResults(await readLog(session));
    expect(results.map((r) => r.code)).toEqual(['error', 'ok']);
    expect(results[0]?.content).toMatch(/Tool call rejected: the arguments for "calculator" are not a valid JSON object: .*6\*7/);
    expect(dispatched.length - before).toBe(1);
    const requests = h().llm.requests({ model });
    expect(requests).toHaveLength(3);
    expect(JSON.stringify(requests[1]?.body)).toContain('not a valid JSON object');
    expect(requests.every((r) => unpairedToolCalls(r.body).length === 0)).toBe(true);
  });

  it('answers a call to an unknown tool with an error result that lists the tools, and goes on', async () => {
    const model = newModel(`unknown-${provider}`);
    h().llm.script(model, { kind: 'tool_calls', calls: [{ name: 'launch_rockets', input: { count: 3 } }] }, { kind: 'text', text: 'I cannot do that.' });
    const session = await start({ model: `${provider}:${model}` });
    const before = dispatched.length;
    expect(await sendAndWait(session, 'launch')).toEqual({ status: 'completed', turn: 1, reason: 'answered' });
    const [result] = toolResults(await readLog(session));
    expect(result).toMatchObject({ name: 'launch_rockets', code: 'error', content: expect.stringMatching(/no tool named "launch_rockets".*calculator, http_request, read_file, write_file/) });
    expect(dispatched.length).toBe(before);
  });

  it('retries a stream with a frame that is not JSON as a network_error, and completes with the clean reply', async () => {
    const model = newModel(`sse-${provider}`);
    h().llm.script(model, { kind: 'malformed', text: GARBLED }, { kind: 'text', text: 'clean' });
    const session = await start({ model: `${provider}:${model}`, retryPolicy: { maxRetries: 2, baseDelayMs: 100, maxDelayMs: 200, budgetMs: 10_000, maxServerWaitMs: 1_000 } });
    expect(await sendAndWait(session, 'hi')).toEqual({ status: 'completed', turn: 1, reason: 'answered' });
    expect(h().llm.requests({ model }).map((r) => r.replyKind)).toEqual(['malformed', 'text']);
    const events = await readLog(session);
    expect(events.filter((e) => e.type === 'assistant').map((e) => e.type === 'assistant' && e.message.text)).toEqual(['clean']);
  });

  it('fails the turn with network_error naming the malformed frame when retries are off, and keeps the session usable', async () => {
    const model = newModel(`sse-off-${provider}`);
    h().llm.script(model, { kind: 'malformed', text: GARBLED }, { kind: 'text', text: 'clean' });
    const session = await start({ model: `${provider}:${model}`, retryPolicy: null });
    const turn = await sendAndWait(session, 'hi');
    expect(turn).toMatchObject({ status: 'failed', failure: { type: 'network_error', message: expect.stringContaining('malformed stream frame') } });
    expect(await sendAndWait(session, 'again')).toEqual({ status: 'completed', turn: 2, reason: 'answered' });
  });
});

describe('a tool result above Temporal\'s 2 MB payload limit', () => {
  it('becomes an error result the model reads, after one run of the tool: the step closes, every call is paired, and the session takes the next message', async () => {
    const model = newModel('huge');
    h().llm.script(
      model,
      { kind: 'tool_calls', calls: [{ name: 'read_file', input: { path: 'huge.txt' } }] },
      { kind: 'text', text: 'That file is large.' },
      { kind: 'text', text: 'Still here.' },
    );
    const session = await start({ model: `anthropic:${model}` });
    const before = dispatched.length;
    const turn = await sendAndWait(session, 'read huge.txt');
    const events = await readLog(session);
    const [result] = toolResults(events);
    // The promise: an error result the model reads, saying why, and the turn goes on.
    expect(turn.status).toBe('completed');
    expect(result?.code).toBe('error');
    expect(result?.content).toMatch(/larger than Temporal's 2 MiB payload limit/);
    // The result is too large on every attempt: running the tool again only repeats the work.
    expect(dispatched.length - before).toBe(1);
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', turn: 1 });
    const history = await historyOf(h().client, session.workflowId);
    expect(has(history, 'workflowTaskFailedEventAttributes')).toBe(false);
    expect(await sendAndWait(session, 'and now?')).toEqual({ status: 'completed', turn: 2, reason: 'answered' });
    expect(h().llm.requests({ model }).every((r) => unpairedToolCalls(r.body).length === 0)).toBe(true);
  });
});

describe('a conversation larger than one Temporal payload (2 MB), each tool result well below it', () => {
  it('keeps the whole log readable, and the next LLM call gets the whole conversation, read in pages', async () => {
    const model = newModel('big-conversation');
    h().llm.script(
      model,
      { kind: 'tool_calls', calls: [1, 2, 3].map((i) => ({ name: 'read_file', input: { path: `big-${i}.txt` } })) },
      { kind: 'text', text: 'I have read all three.' },
    );
    // A short ladder, so a retried failure shows as extra attempts instead of a long wait.
    const session = await start({ model: `anthropic:${model}`, retryPolicy: { maxRetries: 3, baseDelayMs: 100, maxDelayMs: 200, budgetMs: 10_000, maxServerWaitMs: 1_000 } });
    const turn = await sendAndWait(session, 'read the three big files');

    const events = await readLog(session);
    expect(toolResults(events).map((r) => [r.code, Buffer.byteLength(r.content)])).toEqual([1, 2, 3].map(() => ['ok', BIG_BYTES]));
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', turn: 1 });
    const history = await historyOf(h().client, session.workflowId);
    expect(has(history, 'workflowTaskFailedEventAttributes')).toBe(false);
    expect(turn.status).toBe('completed');
    const last = h().llm.requests({ model }).at(-1);
    expect(JSON.stringify(last?.body).length).toBeGreaterThan(3 * BIG_BYTES);
  });
});

describe('a session log past what one run can carry, counted in UTF-8 bytes (non-ASCII text)', () => {
  it('ends the session with payload_too_large instead of a workflow task that fails forever when it continues as new', async () => {
    // The log is compacted before it is carried, so what is too large to carry is the
    // summary and the system prompt: 700 000 CJK characters, 2.1 MB of UTF-8 but 0.7 M
    // characters of JSON. A guard that counts characters lets this through, and the next
    // run's input is above 2 MiB.
    const cjk = (n: number) => '界'.repeat(n);
    const model = newModel('utf8');
    h().llm.scriptCompaction(model, { kind: 'text', text: cjk(600_000), chunkSize: 100_000 });
    const session = await start({
      model: `anthropic:${model}`,
      system: cjk(100_000),
      retryPolicy: null,
      continueAsNewAfterEvents: 20,
      fork: {
        fromWorkflowId: 'an-old-session',
        events: [
          { type: 'turn/start', seq: 0, at: 0, turn: 1, text: cjk(300_000) },
          { type: 'turn/end', seq: 1, at: 0, turn: 1, status: 'completed', reason: 'answered' },
        ],
      },
    });
    const ended = session.result().then(
      () => 'completed',
      (error: unknown) => (error as { cause?: { type?: string } }).cause?.type ?? String(error),
    );
    // The broken outcome, as soon as it shows: a workflow task that failed (and will again).
    const taskFailed = eventually('a failed workflow task', async () => (has(await historyOf(h().client, session.workflowId), 'workflowTaskFailedEventAttributes') ? 'a workflow task failed' : undefined), 60_000, 500).catch(() => 'never');
    // The turn takes the log past 1 MiB: the session compacts it before it continues as new.
    // Its tool call makes its history alone pass continueAsNewAfterEvents (20, the least).
    h().llm.script(model, { kind: 'tool_calls', calls: [{ id: 'toolu_utf8_1', name: 'calculator', input: { expression: '1+1' } }] }, { kind: 'text', text: 'ok' });
    let verdict = await Promise.race([sendAndWait(session, cjk(100_000)).then(() => undefined, () => undefined), ended, taskFailed]);
    verdict ??= await Promise.race([ended, taskFailed, new Promise<string>((resolve) => setTimeout(() => resolve('still running 20 s after the last turn'), 20_000))]);
    await h().client.workflow.getHandle(session.workflowId).terminate('test cleanup').catch(() => undefined);
    expect(verdict).toBe('payload_too_large');
    expect(has(await historyOf(h().client, session.workflowId), 'workflowTaskFailedEventAttributes')).toBe(false);
  // Its inner waits (60 s for a failed task, 20 s after the last turn) must be reachable.
  }, 150_000);
});

describe('a session whose history grows past Temporal\'s event-count limit (lowered to 300 events on a private server)', () => {
  let server: DevServer;
  let agent: LocalAgent;
  beforeAll(async () => {
    server = await startDevServer({
      ip: '127.0.0.1',
      port: await findFreePort(),
      uiPort: false,
      output: 'ignore',
      dynamicConfig: {
        ...DEFAULT_DYNAMIC_CONFIG,
        'limit.historyCount.error': HISTORY_COUNT_LIMIT,
        'limit.historyCount.warn': HISTORY_COUNT_LIMIT / 2,
        'limit.historyCount.suggestContinueAsNew': HISTORY_COUNT_LIMIT / 2,
      },
    });
    agent = await startLocalAgent({ address: server.address });
  });
  afterAll(async () => {
    await agent?.close();
    await server?.stop();
  });

  it('is never terminated by the server: it continues as new, every turn is answered, and the log keeps every turn', async () => {
    const session = await startSession(agent.client, agent.env, { model: `anthropic:echo-${randomUUID().slice(0, 8)}` });
    const outcomes: unknown[] = [];
    for (let turn = 1; turn <= LONG_SESSION_TURNS; turn++) {
      const outcome = await sendAndWait(session, `message ${turn}`).catch((error: unknown) => `${(error as Error).message}: ${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : ''}`);
      outcomes.push(outcome);
      if (typeof outcome === 'string') break;
    }
    const latest = agent.client.workflow.getHandle(session.workflowId);
    const { status } = await latest.describe();
    const terminated = (await latest.fetchHistory()).events?.at(-1)?.workflowExecutionTerminatedEventAttributes?.reason ?? undefined;
    expect({ status: status.name, terminated }).toEqual({ status: 'RUNNING', terminated: undefined });
    expect(outcomes).toEqual(Array.from({ length: LONG_SESSION_TURNS }, (_, i) => ({ status: 'completed', turn: i + 1, reason: 'answered' })));
    const turnEnds = (await readLog(latest as SessionHandle)).filter((e) => e.type === 'turn/end');
    expect(turnEnds).toHaveLength(LONG_SESSION_TURNS);
    expect((await latest.query(stateQuery)).runs).toBeGreaterThan(1);
  });
});
