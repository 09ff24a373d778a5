import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from '@temporalio/worker';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCustomToolActivities } from '../activities/custom-tools';
import { allRunHistories } from '../client/run-histories';
import { readLog, sendAndWait, startSession, type SessionHandle } from '../client/sessions';
import { cancelTurnUpdate, decideApprovalUpdate, refreshToolsUpdate, stateQuery } from '../contracts/api';
import type { SessionEvent } from '../contracts/session-log';
import { positionIdempotencyKey } from '../contracts/tools/idempotency-key';
import { defineTool, ToolError, type CustomTool, type ToolContext } from '../contracts/tools/custom-tool';
import { workflowBundle } from '../harness/local-agent';
import { PROJECT_ROOT } from '../harness/temporal-binaries';
import { useAgentHarness } from './support/agent-harness';
import { barrier, within } from './support/barrier';
import { eventually } from './support/eventually';

/** What the tools saw, per test: each test's tools key their records by the session. */
const seen = {
  running: 0,
  mostAtOnce: 0,
  refunds: [] as { order: string; ctx: Omit<ToolContext, 'signal' | 'heartbeat'> }[],
  attempts: new Map<string, number>(),
  aborted: barrier<string>(),
  started: barrier(),
};

/** Holds a read-only call until `peers` calls run at once, or 2 s pass: the third of a cap of 2 runs alone and gives up waiting. */
async function overlap(peers: number): Promise<void> {
  seen.running++;
  seen.mostAtOnce = Math.max(seen.mostAtOnce, seen.running);
  try {
    await eventually('peers', () => (seen.running >= peers ? true : undefined), 2_000, 20).catch(() => undefined);
  } finally {
    seen.running--;
  }
}

const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'Looks an order up by its id.',
  input: z.object({ id: z.string() }),
  sideEffects: false,
  async run({ id }) {
    await overlap(2);
    return { id, status: 'shipped' };
  },
});

const refund = defineTool({
  name: 'refund',
  description: 'Refunds an order.',
  input: z.object({ order: z.string() }),
  sideEffects: true,
  run({ order }, { idempotencyKey, sessionId, turn, step, callId }) {
    seen.mostAtOnce = Math.max(seen.mostAtOnce, seen.running + 1);
    seen.refunds.push({ order, ctx: { idempotencyKey, sessionId, turn, step, callId } });
    return `refunded ${order}`;
  },
});

const orderApi = defineTool({
  name: 'order_api',
  description: 'Calls the order API: GET reads, POST changes.',
  input: z.object({ method: z.enum(['GET', 'POST']) }),
  sideEffects: ({ method }) => method !== 'GET',
  run: ({ method }) => `${method} done`,
});

const flakyRead = defineTool({
  name: 'flaky_read',
  description: 'Fails its first attempt.',
  input: z.object({ key: z.string() }),
  sideEffects: false,
  maxAttempts: 2,
  run({ key }, ctx) {
    const attempt = (seen.attempts.get(key) ?? 0) + 1;
    seen.attempts.set(key, attempt);
    if (attempt === 1) {
      ctx.heartbeat({ cursor: 'page-2' });
      throw new Error('the database hiccuped');
    }
    return `read ${key} on attempt ${attempt} from ${(ctx.heartbeatDetails as { cursor?: string } | undefined)?.cursor}`;
  },
});

/** Runs past its own heartbeat timeout: only the worker's beats keep it alive. */
const longerThanItsHeartbeat = defineTool({
  name: 'long_read',
  description: 'Takes longer than its heartbeat timeout.',
  input: z.object({}),
  sideEffects: false,
  heartbeatTimeoutMs: 1_000,
  maxAttempts: 1,
  run: () => new Promise<string>((resolve) => setTimeout(() => resolve('read in 2.5 s'), 2_500)),
});

const failingWrite = defineTool({
  name: 'failing_write',
  description: 'Fails.',
  input: z.object({ key: z.string() }),
  sideEffects: true,
  run({ key }) {
    seen.attempts.set(key, (seen.attempts.get(key) ?? 0) + 1);
    // An SDK's error that quotes the credential it sent: it must not reach history as it is.
    throw new Error('the payment service is down (401 for Authorization: Bearer pay_live_0123456789abcdef)');
  },
});

const answers = defineTool({
  name: 'answers',
  description: 'Answers in ways the model must be told about.',
  input: z.object({ kind: z.enum(['tool_error', 'long_tool_error', 'function', 'huge', 'cycle']) }),
  sideEffects: false,
  maxResultChars: 100,
  run({ kind }) {
    if (kind === 'tool_error') throw new ToolError('No order with that id; ask the user for the id on their receipt.');
    if (kind === 'long_tool_error') throw new ToolError('e'.repeat(150));
    if (kind === 'function') return { total: () => 42 };
    if (kind === 'cycle') {
      const node: Record<string, unknown> = {};
      node.self = node;
      return node;
    }
    return 'x'.repeat(101);
  },
});

const waitForCancel = defineTool({
  name: 'wait_for_cancel',
  description: 'Runs until cancelled.',
  input: z.object({}),
  sideEffects: false,
  run(_input, { signal, callId }) {
    seen.started.open();
    return new Promise((_resolve, reject) =>
      signal.addEventListener('abort', () => {
        seen.aborted.open(callId);
        reject(new Error('aborted'));
      }),
    );
  },
});

const v1Schema = z.object({ id: z.string() });
/** The tools the worker starts with; the schema-change test swaps one before it restarts the worker. */
const tools: CustomTool[] = [lookupOrder, refund, orderApi, flakyRead, longerThanItsHeartbeat, failingWrite, answers, waitForCancel, defineTool({ name: 'catalogue', description: 'v1', input: v1Schema, sideEffects: false, run: () => 'v1' })] as CustomTool[];

/** The example of docs/tools.md, as written there, importing this checkout's package entry; its tools join the worker's. */
const docs: { findOrder?: CustomTool; refundOrder?: CustomTool } = {};
beforeAll(async () => {
  const text = await readFile(path.join(PROJECT_ROOT, 'docs', 'tools.md'), 'utf8');
  const block = /## Your own tools\n[^]*?```ts\n([^]*?)```/.exec(text)?.[1];
  if (!block) throw new Error('docs/tools.md has no ts block under "## Your own tools"');
  const file = path.join(PROJECT_ROOT, 'test-results', 'docs-tools-example.ts');
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, block.replace("from 'durable-agent-worker'", `from ${JSON.stringify(path.join(PROJECT_ROOT, 'index.ts'))}`));
  Object.assign(docs, await import(pathToFileURL(file).href));
  tools.push(docs.findOrder as CustomTool, docs.refundOrder as CustomTool);
});

const h = useAgentHarness({ tools });

let models = 0;
const newModel = (name: string) => `custom-${name}-${++models}-${Date.now()}`;

function start(model: string, extra: Record<string, unknown> = {}, provider = 'anthropic'): Promise<SessionHandle> {
  return startSession(h().client, { AGENT_TASK_QUEUE: h().taskQueue }, { model: `${provider}:${model}`, customTools: tools.map((t) => t.name), ...extra });
}

const results = (events: SessionEvent[]) => Object.fromEntries(events.flatMap((e) => (e.type === 'tool/result' ? [[e.callId, { code: e.code, content: e.content }]] : [])));
const call = (id: string, name: string, input: Record<string, unknown>) => ({ id, name, input });

describe('defineTool refuses a definition that cannot work, in one line naming the tool and the problem', () => {
  const base = { name: 'ok_tool', description: 'd', input: z.object({}), sideEffects: false, run: () => 'x' };
  it.each([
    [{ ...base, name: 'has space' }, 'defineTool "has space": name: must be 1 to 64 letters, digits, _ or - (what the providers accept)'],
    [{ ...base, name: 'x'.repeat(65) }, /^defineTool "x{65}": name: must be 1 to 64/],
    [{ ...base, name: 'mcp__fs__read' }, 'defineTool "mcp__fs__read": name: must not start with "mcp__", which names MCP tools'],
    [{ ...base, name: 'calculator' }, /^defineTool "calculator": name: is a built-in tool's \(calculator, http_request, read_file, write_file\)$/],
    [{ ...base, input: z.string() }, /^defineTool "ok_tool": input: must be a zod object schema/],
    [{ ...base, input: { type: 'object' } }, /^defineTool "ok_tool": input: must be a zod object schema/],
    [{ ...base, run: 'not a function' }, 'defineTool "ok_tool": run: must be a function (input, ctx) => result'],
    [{ ...base, sideEffects: 'sometimes' }, 'defineTool "ok_tool": sideEffects: must be true, false or a function of the input'],
    [{ ...base, timeoutMs: 0 }, 'defineTool "ok_tool": timeoutMs: must be a whole number from 1 to 86400000'],
    [{ ...base, maxAttempts: 11 }, 'defineTool "ok_tool": maxAttempts: must be a whole number from 1 to 10'],
  ])('refuses %#', (options, message) => {
    expect(() => defineTool(options as never)).toThrow(message);
  });

  it('gives a tool its documented defaults, frozen', () => {
    const tool = defineTool(base);
    expect(tool).toMatchObject({ timeoutMs: 60_000, heartbeatTimeoutMs: 10_000, maxAttempts: 3, maxResultChars: 65_536 });
    expect(Object.isFrozen(tool)).toBe(true);
  });

  it('refuses two tools of one name, or one not made by defineTool, when the worker builds its activities', () => {
    expect(() => createCustomToolActivities([lookupOrder, { ...lookupOrder }] as CustomTool[])).toThrow('worker tools: "lookup_order" is not made by defineTool');
    const again = defineTool({ ...lookupOrder, description: 'Another lookup.' });
    expect(() => createCustomToolActivities([lookupOrder, refund, again] as CustomTool[])).toThrow('worker tools: "lookup_order" is defined twice');
    // The worker's own list and an agent's may name one definition: one tool.
    expect(() => createCustomToolActivities([lookupOrder, refund, lookupOrder] as CustomTool[])).not.toThrow();
  });

  it('refuses a tool whose offer would put more than an MCP listing allows into history and every request', () => {
    const wordy = defineTool({ ...lookupOrder, description: 'd'.repeat(4097) });
    expect(() => createCustomToolActivities([wordy] as CustomTool[])).toThrow('worker tools: "lookup_order": description: must be at most 4096 characters (it is 4097)');
    const huge = defineTool({ name: 'lookup_order', description: 'Looks up an order.', input: z.object({ status: z.enum(Array.from({ length: 8_000 }, (_, i) => `status-${i}`) as [string, ...string[]]) }), sideEffects: false, run: () => 'none' });
    expect(() => createCustomToolActivities([huge] as CustomTool[])).toThrow(/worker tools: "lookup_order": input: its JSON Schema must be at most 65536 characters \(it is \d+\)/);
  });
});

describe('custom tools keep the tool contract on a real worker', () => {
  it('runs read-only calls in parallel under the concurrency cap, and side-effecting ones alone, in call order, once, with their keys', async () => {
    const model = newModel('lanes');
    h().llm.script(
      model,
      {
        kind: 'tool_calls',
        calls: [call('c1', 'lookup_order', { id: 'a' }), call('c2', 'lookup_order', { id: 'b' }), call('c3', 'lookup_order', { id: 'c' }), call('c4', 'refund', { order: 'a' }), call('c5', 'refund', { order: 'b' })],
      },
      { kind: 'text', text: 'Done.' },
    );
    const session = await start(model, { toolConcurrency: 2 });
    seen.mostAtOnce = 0;
    seen.refunds = [];
    expect(await sendAndWait(session, 'look up and refund')).toMatchObject({ status: 'completed' });
    expect(seen.mostAtOnce).toBe(2);
    const key = (callId: string) => positionIdempotencyKey(session.workflowId, { turn: 1, step: 1, callId });
    expect(seen.refunds).toEqual([
      { order: 'a', ctx: { idempotencyKey: key('c4'), sessionId: session.workflowId, turn: 1, step: 1, callId: 'c4' } },
      { order: 'b', ctx: { idempotencyKey: key('c5'), sessionId: session.workflowId, turn: 1, step: 1, callId: 'c5' } },
    ]);
    const events = await readLog(session);
    expect(results(events)).toMatchObject({ c1: { code: 'ok', content: '{"id":"a","status":"shipped"}' }, c4: { code: 'ok', content: 'refunded a' } });
    // The offer is in the log, once, with the lane rules, before the first LLM call.
    const listed = events.filter((e) => e.type === 'tools/listed');
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ servers: [], tools: [], custom: expect.arrayContaining([expect.objectContaining({ name: 'order_api', lane: 'by_input' })]) });
    const offered = JSON.stringify(h().llm.requests({ model })[0]?.body);
    expect(offered).toContain('"lookup_order"');
    expect(offered).toContain('Refunds an order.');
  });

  it('decides a lane that is a function of the input per call: --approve-tools "*" holds the POST and not the GET', async () => {
    const model = newModel('by-input');
    h().llm.script(model, { kind: 'tool_calls', calls: [call('g1', 'order_api', { method: 'GET' }), call('p1', 'order_api', { method: 'POST' }), call('bad', 'order_api', { method: 'PUT' })] }, { kind: 'text', text: 'Done.' });
    const session = await start(model, { approvalRequired: ['*'] });
    const turn = sendAndWait(session, 'call the api');
    await eventually('the POST to wait for approval', async () => ((await session.query(stateQuery)).pendingApprovals.some((a) => a.callId === 'p1') ? true : undefined), 10_000);
    expect((await session.query(stateQuery)).pendingApprovals.map((a) => a.callId)).toEqual(['p1']);
    expect(results(await readLog(session))).toMatchObject({ g1: { code: 'ok', content: 'GET done' } });
    await session.executeUpdate(decideApprovalUpdate, { args: [{ callId: 'p1', approved: true }] });
    expect(await turn).toMatchObject({ status: 'completed' });
    const byId = results(await readLog(session));
    expect(byId.p1).toEqual({ code: 'ok', content: 'POST done' });
    // The worker parsed it with the tool's own schema: never dispatched.
    expect(byId.bad).toMatchObject({ code: 'error', content: expect.stringContaining('invalid arguments for "order_api"') });
  });

  it('gives the model a ToolError (within the result limit), a result that is not JSON and one past the limit as error results, and retries a read-only call that threw', async () => {
    const model = newModel('results');
    const kinds = ['tool_error', 'long_tool_error', 'function', 'cycle', 'huge'] as const;
    h().llm.script(model, { kind: 'tool_calls', calls: [...kinds.map((kind) => call(kind, 'answers', { kind })), call('flaky', 'flaky_read', { key: 'results' })] }, { kind: 'text', text: 'Noted.' });
    const session = await start(model);
    expect(await sendAndWait(session, 'try these')).toMatchObject({ status: 'completed' });
    expect(results(await readLog(session))).toEqual({
      tool_error: { code: 'error', content: 'No order with that id; ask the user for the id on their receipt.' },
      long_tool_error: { code: 'error', content: `${'e'.repeat(99)}…` },
      function: { code: 'error', content: 'The tool "answers" ran, but its result was refused: the result.total is a function, which is not JSON. Tell the user; the tool must return JSON.' },
      cycle: { code: 'error', content: 'The tool "answers" ran, but its result was refused: the result.self refers to itself. Tell the user; the tool must return JSON.' },
      huge: { code: 'error', content: 'The tool "answers" ran, but its result was refused: 101 characters, more than its limit of 100. Ask for less (a range, a summary, a smaller page).' },
      flaky: { code: 'ok', content: 'read results on attempt 2 from page-2' },
    });
  });

  it('keeps a call alive past a heartbeat timeout shorter than 2 s by beating three times per timeout', async () => {
    const model = newModel('short-heartbeat');
    h().llm.script(model, { kind: 'tool_calls', calls: [call('long', 'long_read', {})] }, { kind: 'text', text: 'Read.' });
    const session = await start(model);
    expect(await sendAndWait(session, 'read slowly')).toMatchObject({ status: 'completed' });
    expect(results(await readLog(session)).long).toEqual({ code: 'ok', content: 'read in 2.5 s' });
  });

  it('fails the step on a side-effecting call that threw, after one attempt, and compensation answers it TOOL_OUTCOME_UNKNOWN and the next TOOL_NOT_STARTED', async () => {
    const model = newModel('compensation');
    h().llm.script(model, { kind: 'tool_calls', calls: [call('w1', 'failing_write', { key: 'compensation' }), call('w2', 'refund', { order: 'never' })] });
    const session = await start(model);
    const outcome = await sendAndWait(session, 'pay');
    expect(outcome).toMatchObject({ status: 'failed', failure: { type: 'tool_failed', message: expect.stringContaining('custom tool "failing_write" failed: the payment service is down') } });
    expect(JSON.stringify(await allRunHistories(session.client, session.workflowId))).not.toContain('pay_live_0123456789abcdef');
    expect(seen.attempts.get('compensation')).toBe(1);
    const byId = results(await readLog(session));
    expect(byId.w1?.code).toBe('TOOL_OUTCOME_UNKNOWN');
    expect(byId.w2?.code).toBe('TOOL_NOT_STARTED');
  });

  it("reaches the tool's signal when the turn is cancelled", async () => {
    const model = newModel('cancel');
    h().llm.script(model, { kind: 'tool_calls', calls: [call('slow', 'wait_for_cancel', {})] });
    const session = await start(model);
    const turn = sendAndWait(session, 'wait');
    await within(seen.started.wait(), 'the tool to start');
    await session.executeUpdate(cancelTurnUpdate);
    expect(await within(seen.aborted.wait(), "the tool's signal to abort")).toBe('slow');
    expect(await turn).toMatchObject({ status: 'cancelled' });
    expect(results(await readLog(session)).slow?.code).toBe('TOOL_OUTCOME_UNKNOWN');
  });

  it("runs docs/tools.md's example: a ToolError the model reads, and a refund that honours its idempotency key", async () => {
    const model = newModel('docs');
    h().llm.script(
      model,
      { kind: 'tool_calls', calls: [call('f1', 'find_order', { id: 'A-1001' }), call('f2', 'find_order', { id: 'B-2' }), call('r1', 'refund_order', { id: 'A-1001' })] },
      { kind: 'text', text: 'Refunded.' },
    );
    const session = await start(model, { customTools: ['find_order', 'refund_order'] });
    expect(await sendAndWait(session, 'refund A-1001')).toMatchObject({ status: 'completed' });
    const key = positionIdempotencyKey(session.workflowId, { turn: 1, step: 1, callId: 'r1' });
    expect(results(await readLog(session))).toEqual({
      f1: { code: 'ok', content: '{"id":"A-1001","status":"shipped","cents":2599}' },
      f2: { code: 'error', content: 'There is no order B-2; ask the user for the id on the receipt.' },
      r1: { code: 'ok', content: `refunded A-1001 (${key})` },
    });
  });

  it('offers a custom tool on each provider, and the model reads its result', async () => {
    for (const provider of ['anthropic', 'openai', 'google']) {
      const model = newModel(`wire-${provider}`);
      h().llm.script(model, { kind: 'tool_calls', calls: [call(`w_${provider}`, 'refund', { order: provider })] }, { kind: 'text', text: 'Refunded.' });
      const session = await start(model, { customTools: ['refund'] }, provider);
      expect(await sendAndWait(session, 'refund')).toMatchObject({ status: 'completed' });
      const [first, second] = h().llm.requests({ model }).map((r) => JSON.stringify(r.body));
      expect(first).toContain('Refunds an order.');
      expect(second).toContain(`refunded ${provider}`);
    }
  });

  it('refuses a custom tool the worker does not have, in one line naming the ones it has, before the model is called', async () => {
    const model = newModel('unknown');
    const session = await start(model, { customTools: ['refund', 'no_such_tool'] });
    expect(await sendAndWait(session, 'hi')).toMatchObject({
      status: 'failed',
      failure: { type: 'unknown_custom_tool', message: expect.stringContaining('this worker has no custom tool "no_such_tool"; it has lookup_order, refund, order_api') },
    });
    expect(h().llm.requests({ model })).toHaveLength(0);
  });

  it("keeps a session's offer across a deploy that changes the tool's schema, replays it, and offers the new schema after refreshTools", async () => {
    const model = newModel('schema');
    h().llm.script(model, { kind: 'text', text: 'one' }, { kind: 'text', text: 'two' }, { kind: 'text', text: 'three' });
    const session = await start(model, { customTools: ['catalogue'] });
    await sendAndWait(session, 'first');
    await h().stopWorker();
    const index = tools.findIndex((t) => t.name === 'catalogue');
    tools[index] = defineTool({ name: 'catalogue', description: 'v2', input: z.object({ sku: z.number() }), sideEffects: true, run: () => 'v2' }) as CustomTool;
    await h().startWorker();
    await sendAndWait(session, 'second');
    await session.executeUpdate(refreshToolsUpdate);
    await sendAndWait(session, 'third');
    const descriptions = h().llm.requests({ model }).map((r) => (JSON.stringify(r.body).includes('"v2"') ? 'v2' : 'v1'));
    expect(descriptions).toEqual(['v1', 'v1', 'v2']);
    const listed = (await readLog(session)).flatMap((e) => (e.type === 'tools/listed' ? [e.custom?.map((t) => [t.description, t.lane])] : []));
    expect(listed).toEqual([[['v1', 'read_only']], [['v2', 'side_effecting']]]);
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, await session.fetchHistory());
  });
});
