/**
 * The tool contract for custom tools end to end on real worker PROCESSES (issue #27's "Done
 * when"): two processes of test/support/custom-tools-worker.ts share one task queue (both
 * started at once, in beforeAll: a worker process takes seconds to start), and each polls a
 * queue of its own as well, for what must run on one of them. Every tool run reports itself to
 * the test's call gate, so the test sees which calls ran, where, with which key and which of
 * them at once, whichever process took them. The model's calls come in each provider's wire
 * format; the process that runs a side-effecting call is killed with SIGKILL last, since the
 * other tests want both.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forkSession, readLog, sendAndWait, startSession, type SessionHandle } from '../client/sessions';
import { cancelTurnUpdate, decideApprovalUpdate, stateQuery } from '../contracts/api';
import type { SessionEvent } from '../contracts/session-log';
import type { CustomToolOffer } from '../contracts/tools/custom-tool-offer';
import { positionIdempotencyKey } from '../contracts/tools/idempotency-key';
import { PROJECT_ROOT } from '../harness/temporal-binaries';
import { turnThatRead } from '../harness/turn-that-read';
import { agentWorkerEnv } from '../harness/worker-env';
import { spawnWorker, type WorkerProcess } from '../harness/worker-process';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { runEntry } from './support/cli';
import { eventually } from './support/eventually';
import { startOtlpEndpoint, type OtlpEndpoint } from './support/otlp-endpoint';
import { startToolCallGate, type ToolCallGate } from './support/tool-call-gate';
import { workerLogFile } from './support/worker-processes';
import { devServerAddress, devServerNamespace, uniqueTaskQueue } from './temporal-env';

const ENTRY = path.join(PROJECT_ROOT, 'test', 'support', 'custom-tools-worker.ts');
const PROVIDERS = ['anthropic', 'openai', 'google'] as const;
const queue = uniqueTaskQueue('custom-tools');
/** Each process's own queue, and the service its spans are exported as: one puts tool arguments on spans, one does not. */
const OWN = { content: { queue: `${queue}-content`, traceContent: 'true' }, plain: { queue: `${queue}-plain`, traceContent: 'false' } } as const;

let llm: ScriptedLlm;
let client: Client;
let gate: ToolCallGate;
let otlp: OtlpEndpoint;
const workers: WorkerProcess[] = [];

async function startWorker(name: keyof typeof OWN): Promise<WorkerProcess> {
  const logFile = workerLogFile(`custom-tools-${name}`);
  await rm(logFile, { force: true });
  const extra = {
    CUSTOM_TOOLS_GATE: gate.url,
    CUSTOM_TOOLS_OWN_QUEUE: OWN[name].queue,
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
    OTEL_SERVICE_NAME: `custom-tools-${name}`,
    AGENT_TRACE_CONTENT: OWN[name].traceContent,
  };
  const worker = await spawnWorker({ env: agentWorkerEnv({ address: devServerAddress(), namespace: devServerNamespace(), taskQueue: queue, llmUrl: llm.url, extra }), logFile, entry: ENTRY });
  workers.push(worker);
  await worker.ready;
  return worker;
}

beforeAll(async () => {
  [llm, gate, otlp] = await Promise.all([startScriptedLlm(), startToolCallGate(), startOtlpEndpoint()]);
  client = new Client({ connection: await Connection.connect({ address: devServerAddress() }), namespace: devServerNamespace() });
  // Long enough that read-only calls which may run at once do; a side-effecting one held so that any overlap would show.
  gate.hold('lookup', { untilOpen: 3, atMostMs: 500 });
  gate.hold('refund', { atMostMs: 200 });
  await Promise.all([startWorker('content'), startWorker('plain')]);
}, 120_000);

afterAll(async () => {
  for (const worker of workers) await worker.kill('SIGKILL');
  await client?.connection.close();
  await Promise.all([llm?.close(), gate?.close(), otlp?.close()]);
});

let models = 0;
const newModel = (name: string) => `custom-${name}-${++models}-${Date.now()}`;
const call = (id: string, name: string, input: Record<string, unknown>) => ({ id, name, input });
const results = (events: readonly SessionEvent[]) => Object.fromEntries(events.flatMap((e) => (e.type === 'tool/result' ? [[e.callId, { code: e.code, content: e.content }]] : [])));
const runsOf = (...callIds: string[]) => gate.runs.filter((r) => r.event === 'run' && callIds.includes(r.callId));
/** A session's runs of `tool`, by the input it was given: Gemini's calls carry no id of the model's, the adapter makes one. */
const runsWith = (tool: string, key: string, ...values: string[]) => gate.runs.filter((r) => r.event === 'run' && r.tool === tool && values.includes(String((r.input as Record<string, unknown>)[key])));

function start(model: string, provider: string, extra: Record<string, unknown> = {}, taskQueue = queue): Promise<SessionHandle> {
  return startSession(client, { AGENT_TASK_QUEUE: taskQueue }, { model: `${provider}:${model}`, customTools: ['lookup', 'refund', 'order_api', 'charge', 'wait_for_cancel'], ...extra });
}

describe('custom tools keep the tool contract on real worker processes', () => {
  it.each(PROVIDERS)('%s: runs read-only calls in parallel under the cap, and side-effecting ones alone, in call order, once, with their keys', async (provider) => {
    const model = newModel(`lanes-${provider}`);
    const [a, b, c] = ['a', 'b', 'c'].map((v) => `${provider}-${v}`) as [string, string, string];
    llm.script(
      model,
      {
        kind: 'tool_calls',
        calls: [call(`${a}_l`, 'lookup', { q: a }), call(`${b}_l`, 'lookup', { q: b }), call(`${c}_l`, 'lookup', { q: c }), call(`${a}_r`, 'refund', { order: a }), call(`${b}_r`, 'refund', { order: b })],
      },
      { kind: 'text', text: 'Done.' },
    );
    const session = await start(model, provider, { toolConcurrency: 2 });
    expect(await sendAndWait(session, 'look up and refund')).toMatchObject({ status: 'completed' });

    expect(Math.max(...runsWith('lookup', 'q', a, b, c).map((r) => r.atOnce))).toBe(2);
    const key = (callId: string) => positionIdempotencyKey(session.workflowId, { turn: 1, step: 1, callId });
    const refunds = runsWith('refund', 'order', a, b);
    expect(refunds.map(({ callId, idempotencyKey, input, atOnce }) => ({ key: idempotencyKey === key(callId), input, atOnce }))).toEqual([
      { key: true, input: { order: a }, atOnce: 1 },
      { key: true, input: { order: b }, atOnce: 1 },
    ]);
    expect(new Set(refunds.map((r) => r.idempotencyKey)).size).toBe(2);
    const answered = (await readLog(session)).flatMap((e) => (e.type === 'tool/result' ? [`${e.code} ${e.content}`] : []));
    expect(answered.sort()).toEqual([`ok found ${a}`, `ok found ${b}`, `ok found ${c}`, `ok refunded ${a}`, `ok refunded ${b}`]);
    // The model was offered the tools in its wire format, and read their results in it.
    const [offered, next] = llm.requests({ model }).map((r) => JSON.stringify(r.body));
    expect(offered).toContain('Refunds an order.');
    expect(next).toContain(`refunded ${b}`);
  });

  it('holds a call the worker decides is side-effecting for --approve-tools "*", runs the read-only one meanwhile, and runs the held one once approved', async () => {
    const model = newModel('approval');
    llm.script(model, { kind: 'tool_calls', calls: [call('approval_get', 'order_api', { method: 'GET' }), call('approval_post', 'order_api', { method: 'POST' })] }, { kind: 'text', text: 'Done.' });
    const session = await start(model, 'anthropic', { approvalRequired: ['*'] });
    const turn = sendAndWait(session, 'call the api');
    await eventually('the POST to wait for approval', async () => ((await session.query(stateQuery)).pendingApprovals.some((a) => a.callId === 'approval_post') ? true : undefined), 20_000);
    await eventually('the GET to run', () => (runsOf('approval_get').length === 1 ? true : undefined));
    expect(runsOf('approval_post')).toEqual([]);

    await session.executeUpdate(decideApprovalUpdate, { args: [{ callId: 'approval_post', approved: true }] });
    expect(await turn).toMatchObject({ status: 'completed' });
    expect(runsOf('approval_post').map((r) => r.idempotencyKey)).toEqual([positionIdempotencyKey(session.workflowId, { turn: 1, step: 1, callId: 'approval_post' })]);
    expect(results(await readLog(session))).toMatchObject({ approval_get: { code: 'ok', content: 'GET done' }, approval_post: { code: 'ok', content: 'POST done' } });
  });

  it("reaches the tool's signal on its worker process when the turn is cancelled", async () => {
    const model = newModel('cancel');
    llm.script(model, { kind: 'tool_calls', calls: [call('cancel_slow', 'wait_for_cancel', {})] });
    const session = await start(model, 'google');
    const turn = sendAndWait(session, 'wait');
    // The only test that calls wait_for_cancel; Gemini's call gets its id from the adapter.
    const [started] = await eventually('the tool to start', () => (gate.runs.some((r) => r.tool === 'wait_for_cancel') ? gate.runs.filter((r) => r.tool === 'wait_for_cancel') : undefined), 20_000);
    await session.executeUpdate(cancelTurnUpdate);
    await eventually("the tool's signal to abort", () => (gate.runs.some((r) => r.event === 'aborted' && r.callId === started?.callId) ? true : undefined), 20_000);
    expect(await turn).toMatchObject({ status: 'cancelled' });
    expect(Object.values(results(await readLog(session))).map((r) => r.code)).toEqual(['TOOL_OUTCOME_UNKNOWN']);
  });
});

describe('what `agent tools` and `agent log` show of custom tools', () => {
  it('lists each with its lane rule, its approval and "(custom)", human and --json', async () => {
    const model = newModel('cli');
    llm.script(model, { kind: 'text', text: 'hi' });
    const session = await start(model, 'anthropic', { customTools: ['lookup', 'refund', 'order_api'], approvalRequired: ['order_api'] });
    expect(await sendAndWait(session, 'hello')).toMatchObject({ status: 'completed' });
    const cliEnv = { TEMPORAL_ADDRESS: devServerAddress(), TEMPORAL_NAMESPACE: devServerNamespace(), AGENT_TASK_QUEUE: queue };
    const cli = (command: string, ...flags: string[]) => runEntry('client/main.ts', [command, session.workflowId, ...flags], cliEnv);
    const [tools, toolsJson, log, logJson] = await Promise.all([cli('tools'), cli('tools', '--json'), cli('log'), cli('log', '--json')]);

    expect(tools.stdout.split('\n').filter((line) => line.includes('(custom)'))).toEqual([
      expect.stringMatching(/^lookup +read-only {2}\(custom\)$/),
      expect.stringMatching(/^refund +side-effecting {2}\(custom\)$/),
      expect.stringMatching(/^order_api +read-only or side-effecting, by its input, waits for approval {2}\(custom\)$/),
    ]);
    expect((JSON.parse(toolsJson.stdout) as { tools: unknown[] }).tools.filter((t) => (t as { custom?: true }).custom)).toEqual([
      { name: 'lookup', lane: 'read-only', approval: false, custom: true },
      { name: 'refund', lane: 'side-effecting', approval: false, custom: true },
      { name: 'order_api', lane: 'read-only or side-effecting, by its input', approval: true, custom: true },
    ]);
    expect(log.stdout).toMatch(/custom tools listed: lookup \(read-only\), refund \(side-effecting\), order_api \(read-only or side-effecting, by its input\)\n/);
    const listed = (JSON.parse(logJson.stdout) as SessionEvent[]).find((e) => e.type === 'tools/listed');
    expect(listed).toMatchObject({ custom: [{ name: 'lookup', lane: 'read_only' }, { name: 'refund', lane: 'side_effecting' }, { name: 'order_api', lane: 'by_input' }] });
  });
});

describe('a fork of a session offered custom tools', () => {
  it('keeps the offer its source recorded, though a compaction left it out of the tail, and can call the tools', async () => {
    const model = newModel('fork-source');
    llm.setContextWindow(model, 8_000);
    llm.script(model, { kind: 'text', text: 'ok' });
    // What the source was offered, as a worker long gone described the tool: the fork must keep this, not list today's.
    const recorded: CustomToolOffer = {
      name: 'lookup',
      description: 'Looks something up, as the source was offered it.',
      inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false },
      lane: 'read_only',
      timeoutMs: 60_000,
      heartbeatTimeoutMs: 10_000,
      maxAttempts: 3,
    };
    const offered = { type: 'tools/listed', seq: 0, at: 0, turn: 1, servers: [], tools: [], custom: [recorded] } as SessionEvent;
    const events = [offered, ...turnThatRead('q'.repeat(28_000)).map((e) => ({ ...e, seq: e.seq + 1 }))];
    const source = await start(model, 'anthropic', { customTools: ['lookup'], contextWindow: 8_000, fork: { fromWorkflowId: 'a-session-offered-custom-tools', events } });
    expect(await sendAndWait(source, 'and now?')).toMatchObject({ status: 'completed' });
    expect((await readLog(source)).some((e) => e.type === 'context/compacted' && e.throughSeq > 0)).toBe(true);

    const forkModel = newModel('forked');
    llm.script(forkModel, { kind: 'tool_calls', calls: [call('fork_lookup', 'lookup', { q: 'forked' })] }, { kind: 'text', text: 'Found.' });
    const fork = await forkSession(client, { AGENT_TASK_QUEUE: queue }, source.workflowId, { model: `openai:${forkModel}` });
    expect(await sendAndWait(fork, 'look it up')).toMatchObject({ status: 'completed' });
    const forkLog = await readLog(fork);
    expect(forkLog.filter((e) => e.type === 'tools/listed')).toEqual([expect.objectContaining({ custom: [recorded] })]);
    expect(results(forkLog)).toEqual({ fork_lookup: { code: 'ok', content: 'found forked' } });
    expect(JSON.stringify(llm.requests({ model: forkModel })[0]?.body)).toContain('as the source was offered it');
    const history = await fork.fetchHistory();
    expect((history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'listCustomTools')).toEqual([]);
  });
});

describe("custom tool calls' arguments on spans", () => {
  it('are on the attempt span with AGENT_TRACE_CONTENT=true, as for a built-in tool, and on no span without it', async () => {
    const marker = (name: string) => `span-argument-${name}-${Date.now()}`;
    const sessions = await Promise.all(
      (['content', 'plain'] as const).map(async (name) => {
        const model = newModel(`span-${name}`);
        const q = marker(name);
        llm.script(model, { kind: 'tool_calls', calls: [call(`span_${name}`, 'lookup', { q })] }, { kind: 'text', text: 'Found.' });
        const session = await start(model, 'anthropic', { customTools: ['lookup'] }, OWN[name].queue);
        expect(await sendAndWait(session, 'look it up')).toMatchObject({ status: 'completed' });
        return { name, q, workflowId: session.workflowId };
      }),
    );
    const attempt = ({ name, workflowId }: { name: string; workflowId: string }) =>
      eventually(`the ${name} worker's runCustomTool span`, () => otlp.spans.find((s) => s.service === `custom-tools-${name}` && s.name === 'RunActivity:runCustomTool' && s.attributes.temporalWorkflowId === workflowId));
    const [content, plain] = sessions as [(typeof sessions)[0], (typeof sessions)[0]];
    expect((await attempt(content)).attributes).toMatchObject({ 'agent.tool.name': 'lookup', 'agent.tool.arguments': JSON.stringify({ q: content.q }) });
    expect((await attempt(plain)).attributes).not.toHaveProperty('agent.tool.arguments');
    expect(otlp.exports.join('\n')).not.toContain(plain.q);
  });
});

describe('a custom tool call on a worker killed mid-call', () => {
  it('is answered TOOL_OUTCOME_UNKNOWN, never run twice, and the session goes on on the other worker', async () => {
    const model = newModel('kill');
    llm.script(
      model,
      { kind: 'tool_calls', calls: [call('kill_charge', 'charge', { cents: 500 }), call('kill_lookup', 'lookup', { q: 'after' })] },
      { kind: 'tool_calls', calls: [call('kill_again', 'lookup', { q: 'again' })] },
      { kind: 'text', text: 'Found it.' },
    );
    const session = await start(model, 'openai');
    const turn = sendAndWait(session, 'charge me');
    const [charged] = await eventually('the charge to run', () => (runsOf('kill_charge').length > 0 ? runsOf('kill_charge') : undefined), 20_000);
    await workers.find((w) => w.pid === charged?.pid)?.kill('SIGKILL');

    expect(await turn).toMatchObject({ status: 'failed', failure: { type: 'heartbeat_timeout' } });
    expect(runsOf('kill_charge').map((r) => r.idempotencyKey)).toEqual([positionIdempotencyKey(session.workflowId, { turn: 1, step: 1, callId: 'kill_charge' })]);
    const codes = (await readLog(session)).flatMap((e) => (e.type === 'tool/result' ? [[e.callId, e.code]] : []));
    expect(codes).toEqual([
      ['kill_charge', 'TOOL_OUTCOME_UNKNOWN'],
      ['kill_lookup', 'TOOL_NOT_STARTED'],
    ]);

    expect(await sendAndWait(session, 'look it up')).toMatchObject({ status: 'completed' });
    expect(results(await readLog(session)).kill_again).toEqual({ code: 'ok', content: 'found again' });
    expect(runsOf('kill_again').map((r) => r.pid)).not.toContain(charged?.pid);
  });
});
