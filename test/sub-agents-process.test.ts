/**
 * Sub-agents as child workflows on real worker PROCESSES (issue #31's proof): two processes of
 * test/support/sub-agents-worker.ts share one task queue (both started once, in beforeAll),
 * serve the agents of test/support/sub-agent-definitions.ts, run the traced workflow bundle
 * the file makes once (test/support/traced-workflow-bundle.ts) and export their spans to a
 * real OTLP endpoint; the scripted LLM is every agent's model, on all three wire formats.
 * Which process runs a parent or a child is Temporal's choice: a test that kills one reads
 * from history (the workflow task's or the pending activity's worker identity, `pid@host`)
 * which process to kill, and starts another in its place for the tests after it.
 */
import path from 'node:path';
import { Client, Connection, WorkflowUpdateFailedError } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLog, sendAndWait, startSession, type SessionHandle, type StartOptions } from '../client/sessions';
import { cancelTurn } from '../client/turn-control';
import { stateQuery, type SessionInput, type SessionResult } from '../contracts/api';
import type { SessionEvent } from '../contracts/session-log';
import { tokensOf } from '../contracts/spend';
import { agentToolName, subAgentWorkflowId } from '../contracts/sub-agents';
import { positionIdempotencyKey } from '../contracts/tools/idempotency-key';
import { startLocalGateway } from '../harness/gateway';
import { PROJECT_ROOT } from '../harness/temporal-binaries';
import { agentWorkerEnv } from '../harness/worker-env';
import type { WorkerProcess } from '../harness/worker-process';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { within } from './support/barrier';
import { eventually } from './support/eventually';
import { startOtlpEndpoint, type OtlpEndpoint, type ReceivedSpan } from './support/otlp-endpoint';
import { HELD_AGENTS, subAgentModel } from './support/sub-agent-definitions';
import { tracedWorkflowBundleFile } from './support/traced-workflow-bundle';
import { startWorkerProcess } from './support/worker-processes';
import { devServerAddress, devServerNamespace, uniqueTaskQueue } from './temporal-env';

const ENTRY = path.join(PROJECT_ROOT, 'test', 'support', 'sub-agents-worker.ts');
const PROVIDERS = ['anthropic', 'openai', 'google'] as const;
const queue = uniqueTaskQueue('sub-agents');

let llm: ScriptedLlm;
let otlp: OtlpEndpoint;
let client: Client;
let workerEnv: NodeJS.ProcessEnv;
/** The two processes, by slot: a test that kills one starts another in its slot. */
const workers: WorkerProcess[] = [];
/** A process started in a killed one's slot, for the tests after the kill; it starts while the killing test goes on. */
let replacement: Promise<void> | undefined;
let started = 0;

function startWorker(): Promise<WorkerProcess> {
  return startWorkerProcess(`sub-agents-${++started}`, workerEnv, { entry: ENTRY });
}

beforeAll(async () => {
  let bundle: string;
  [llm, otlp, bundle] = await Promise.all([startScriptedLlm(), startOtlpEndpoint(), tracedWorkflowBundleFile()]);
  workerEnv = agentWorkerEnv({
    address: devServerAddress(),
    namespace: devServerNamespace(),
    taskQueue: queue,
    llmUrl: llm.url,
    extra: { AGENT_WORKFLOW_BUNDLE: bundle, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '100', OTEL_SERVICE_NAME: 'sub-agents-worker' },
  });
  client = new Client({ connection: await Connection.connect({ address: devServerAddress() }), namespace: devServerNamespace() });
  workers.push(...(await Promise.all([startWorker(), startWorker()])));
}, 120_000);

afterAll(async () => {
  await replacement;
  await Promise.all(workers.map((w) => w.kill('SIGKILL')));
  await client?.connection.close();
  await Promise.all([llm?.close(), otlp?.close()]);
});

const call = (id: string, name: string, input: Record<string, unknown>) => ({ id, name, input });
const start = (options: StartOptions): Promise<SessionHandle> => startSession(client, { AGENT_TASK_QUEUE: queue }, options);
const historyOf = async (workflowId: string) => (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
const resultsOf = (events: readonly SessionEvent[]) => events.flatMap((e) => (e.type === 'tool/result' ? [e] : []));

/** The `tool/call` of a sub-agent, once the parent has recorded it (with its child). */
async function childCall(session: SessionHandle, agent: string) {
  return eventually(`${session.workflowId} to call ${agent}`, async () => (await readLog(session)).find((e) => e.type === 'tool/call' && e.name === agentToolName(agent) && e.child !== undefined), 30_000) as Promise<Extract<SessionEvent, { type: 'tool/call' }>>;
}

/** The child id the design derives from the call's position: the same on every replay, so a re-attaching parent finds its child. */
function derivedChildId(parentId: string, agent: string, { turn, step, callId }: { turn: number; step: number; callId: string }): string {
  const key = positionIdempotencyKey(parentId, { turn, step, callId }).slice('agent-'.length, 'agent-'.length + 12);
  return subAgentWorkflowId(parentId, agent, { turn, step, key });
}

/** Every workflow whose id says it is a child of `parentId`'s (visibility, which lags its writes a little). */
async function childrenOf(parentId: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const w of client.workflow.list({ query: `WorkflowId STARTS_WITH "${parentId}/agent/"` })) ids.push(w.workflowId);
  return ids;
}

/** How the held child's requests ended, once the scripted LLM has seen the last one end (a closed socket reaches it a moment after the activity closed it). */
const heldOutcome = (agent: string) =>
  eventually(`the requests of ${agent} to end`, () => {
    const outcomes = llm.requests({ model: subAgentModel(agent) }).map((r) => r.outcome);
    return outcomes.includes('pending') ? undefined : outcomes;
  });

const childStarts = (history: temporal.api.history.v1.IHistoryEvent[]) => history.filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes);

/** The worker process whose identity (`pid@host`, the SDK's default) is `identity`. */
function workerOf(identity: string | null | undefined): WorkerProcess {
  const pid = Number(identity?.split('@')[0]);
  const worker = workers.find((w) => w.pid === pid);
  if (!worker) throw new Error(`no worker process of this file has the identity ${identity}`);
  return worker;
}

/** Kills `worker` with SIGKILL and starts another in its slot. */
async function killAndReplace(worker: WorkerProcess): Promise<void> {
  await worker.kill('SIGKILL');
  replacement = startWorker().then((next) => void workers.splice(workers.indexOf(worker), 1, next));
}

/** The calls of the end-to-end tests, by provider: the trace test reads the first one's spans. */
const e2eCalls = new Map<string, { childId: string; callId: string }>();

describe('an agent as a tool, on real worker processes', () => {
  it.each(PROVIDERS)("%s: the parent's answer uses the child's, from one child workflow with the derived id and a history of its own", async (provider) => {
    const model = `parent-e2e-${provider}`;
    const answer = `Paris, says the researcher on ${provider}`;
    llm.script(model, { kind: 'tool_calls', calls: [call(`${provider}_research`, agentToolName('researcher'), { task: `What is the capital of France? (${provider})` })] }, { kind: 'text', text: `The capital is Paris (${provider}).` });
    llm.script(subAgentModel('researcher'), { kind: 'text', text: answer });
    const session = await start({ agent: 'planner', model: `${provider}:${model}` });
    expect(await sendAndWait(session, 'find the capital of France')).toMatchObject({ status: 'completed' });

    const log = await readLog(session);
    const recorded = log.find((e) => e.type === 'tool/call' && e.name === agentToolName('researcher'));
    if (recorded?.type !== 'tool/call') throw new Error('the parent recorded no call of the researcher');
    const childId = derivedChildId(session.workflowId, 'researcher', recorded);
    expect(recorded.child).toEqual({ workflowId: childId, agent: 'researcher' });
    expect(resultsOf(log).map(({ name, code, content }) => ({ name, code, content }))).toEqual([{ name: agentToolName('researcher'), code: 'ok', content: answer }]);
    // The parent's model read the child's answer, in its own wire format.
    expect(JSON.stringify(llm.requests({ model }).at(-1)?.body)).toContain(answer);
    // The child read the task, and nothing of the parent's conversation.
    const childRequest = JSON.stringify(llm.requests({ model: subAgentModel('researcher') }).at(-1)?.body);
    expect(childRequest).toContain(`What is the capital of France? (${provider})`);
    expect(childRequest).not.toContain('find the capital of France');

    const child = client.workflow.getHandle(childId);
    expect((await child.describe()).parentExecution?.workflowId).toBe(session.workflowId);
    expect(((await child.result()) as SessionResult).answer).toMatchObject({ outcome: { status: 'completed' }, text: answer });
    const [parentHistory, childHistory] = await Promise.all([historyOf(session.workflowId), historyOf(childId)]);
    expect(childStarts(parentHistory)).toHaveLength(1);
    const llmCalls = (history: typeof parentHistory) => history.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callLlm').length;
    // The child's LLM call is in the child's history, not the parent's.
    expect([llmCalls(parentHistory), llmCalls(childHistory)]).toEqual([2, 1]);
    expect(await eventually('the child in visibility', async () => ((await childrenOf(session.workflowId)).length > 0 ? childrenOf(session.workflowId) : undefined))).toEqual([childId]);
    e2eCalls.set(provider, { childId, callId: recorded.callId });
  });

  it("nests the child's spans under the parent's tool span, in the parent's trace", async () => {
    const { childId, callId } = e2eCalls.get('anthropic') ?? { childId: '', callId: '' };
    const spans = () => otlp.spans;
    const byId = (id: string | undefined) => spans().find((s) => s.spanId === id);
    const ancestors = (span: ReceivedSpan) => {
      const chain: ReceivedSpan[] = [];
      for (let s = byId(span.parentSpanId); s; s = byId(s.parentSpanId)) chain.push(s);
      return chain;
    };
    // The child's LLM attempt runs last of its trace; its whole chain up to the parent's send is exported a moment later.
    const chain = await eventually("the child's LLM attempt, under the parent's tool span", () => {
      const attempt = spans().find((s) => s.name === 'RunActivity:callLlm' && s.attributes.temporalWorkflowId === childId);
      const chain = attempt && ancestors(attempt);
      return chain?.some((s) => s.name === `tool ${agentToolName('researcher')}`) && chain.at(-1)?.parentSpanId === undefined ? chain : undefined;
    });
    const tool = chain.find((s) => s.name === `tool ${agentToolName('researcher')}`);
    expect(tool?.attributes).toMatchObject({ 'agent.tool.call_id': callId, 'agent.tool.result_code': 'ok' });
    // Between the tool span and the child's LLM call: the child's start, its run, its turn, its step and its call.
    const below = chain.slice(0, chain.indexOf(tool as ReceivedSpan)).map((s) => s.name).reverse();
    expect(below).toEqual(['StartChildWorkflow:agentSession', 'RunWorkflow:agentSession', 'turn 1', 'step 1', `chat ${subAgentModel('researcher')}`, 'StartActivity:callLlm']);
    expect(new Set(chain.map((s) => s.traceId)).size).toBe(1);
  });
});

describe('a handoff, on real worker processes', () => {
  it.each(PROVIDERS)("%s: the researcher takes the conversation over with its turns so far and answers the user's message; the session that handed over ends", async (provider) => {
    const model = `parent-handoff-${provider}`;
    const answer = `The researcher has it now (${provider}).`;
    llm.script(model, { kind: 'text', text: `Hello from the front desk (${provider}).` }, { kind: 'tool_calls', calls: [call(`${provider}_handoff`, 'handoff__researcher', { reason: 'research' })] });
    llm.script(subAgentModel('researcher'), { kind: 'text', text: answer });
    const session = await start({ model: `${provider}:${model}`, handoffs: ['researcher'] });
    expect(await sendAndWait(session, 'hello')).toMatchObject({ status: 'completed' });

    const answered = await sendAndWait(session, `research this (${provider})`);
    expect(answered).toMatchObject({ status: 'completed', turn: 2, reason: 'answered', handedOffTo: { agent: 'researcher', turn: 2 } });
    const targetId = String(answered.answeredBy);
    expect(targetId.startsWith(`${session.workflowId}/handoff/researcher/2.1-`)).toBe(true);
    // The researcher read the conversation so far and the message it answers.
    const request = JSON.stringify(llm.requests({ model: subAgentModel('researcher') }).at(-1)?.body);
    expect(request).toContain(`Hello from the front desk (${provider}).`);
    expect(request).toContain(`research this (${provider})`);
    expect(ofTypeLast(await readLog(client.workflow.getHandle(targetId)))).toBe(answer);

    expect((await session.result()) as SessionResult).toMatchObject({ endedBy: 'handoff', handedOffTo: { workflowId: targetId, agent: 'researcher' } });
    expect(childStarts(await historyOf(session.workflowId))).toHaveLength(1);
    // It outlives the session that started it (ABANDON): it has the conversation now.
    const target = client.workflow.getHandle(targetId);
    expect((await target.describe()).status.name).toBe('RUNNING');
    await target.terminate('test done');
  });
});

describe('a handoff through the gateway', () => {
  it("answers a waited message with the turn of the session the conversation went to, which takes the next message; a key limited to other agents may not use it", async () => {
    const gw = await startLocalGateway({ address: devServerAddress(), namespace: devServerNamespace(), taskQueue: queue, keys: { admin: { agents: '*' }, planners: { agents: ['planner'] } } });
    try {
      const post = async (p: string, json: unknown, key = 'admin') => {
        const response = await gw.request(p, { method: 'POST', json, key: gw.secrets[key] ?? '' });
        const text = await response.text();
        return { status: response.status, body: JSON.parse(text) as Record<string, unknown> };
      };
      const model = 'parent-handoff-gateway';
      llm.script(model, { kind: 'tool_calls', calls: [call('gateway_handoff', 'handoff__researcher', { reason: 'research' })] });
      llm.script(subAgentModel('researcher'), { kind: 'text', text: 'The researcher answers through the gateway.' }, { kind: 'text', text: 'And the next one too.' });
      const created = await post('/v1/sessions', { model: `anthropic:${model}`, handoffs: ['researcher'] });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const sessionId = String(created.body.sessionId);

      const answered = await post(`/v1/sessions/${encodeURIComponent(sessionId)}/messages`, { text: 'research this', wait: true });
      expect(answered.status, JSON.stringify(answered.body)).toBe(200);
      const targetId = String(answered.body.answeredBy);
      expect(targetId.startsWith(`${sessionId}/handoff/researcher/1.1-`)).toBe(true);
      expect(answered.body).toMatchObject({ status: 'completed', turn: 1, handedOffTo: { workflowId: targetId, agent: 'researcher' } });
      // The turn's messages are the answering session's: the user's message and the researcher's answer.
      expect(JSON.stringify(answered.body.messages)).toContain('The researcher answers through the gateway.');

      const next = await post(`/v1/sessions/${encodeURIComponent(targetId)}/messages`, { text: 'and this', wait: true });
      expect(next.body).toMatchObject({ status: 'completed', turn: 2 });
      expect(JSON.stringify(next.body.messages)).toContain('And the next one too.');
      expect((await post(`/v1/sessions/${encodeURIComponent(targetId)}/messages`, { text: 'me too' }, 'planners')).status).toBe(403);
      // The sessions it started, as `list --parent` lists them (visibility lags its writes a little).
      const listed = await eventually('the gateway to list the session the conversation went to', async () => {
        const response = await gw.request(`/v1/sessions?parent=${encodeURIComponent(sessionId)}`, { key: gw.secrets.admin ?? '' });
        const { sessions } = (await response.json()) as { sessions: { sessionId: string }[] };
        return sessions.length > 0 ? sessions : undefined;
      });
      expect(listed.map((s) => s.sessionId)).toEqual([targetId]);
      await client.workflow.getHandle(targetId).terminate('test done');
    } finally {
      await gw.close();
    }
  });
});

/** The text of the last answer in a log. */
const ofTypeLast = (events: readonly SessionEvent[]) => events.flatMap((e) => (e.type === 'assistant' ? [e.message.text] : [])).at(-1);

describe('the limits of a tree of agents', () => {
  it('answers a call past maxAgentDepth with an error result, starting no child', async () => {
    const model = 'parent-depth';
    llm.script(model, { kind: 'tool_calls', calls: [call('depth_plan', agentToolName('planner'), { task: 'plan a trip' })] }, { kind: 'text', text: 'Planned, without research.' });
    llm.script(subAgentModel('planner'), { kind: 'tool_calls', calls: [call('depth_research', agentToolName('researcher'), { task: 'research the trip' })] }, { kind: 'text', text: 'No research allowed.' });
    const session = await start({ model: `openai:${model}`, agents: ['planner'], maxAgentDepth: 1 });
    expect(await sendAndWait(session, 'plan')).toMatchObject({ status: 'completed' });

    const planner = client.workflow.getHandle((await childCall(session, 'planner')).child?.workflowId ?? '');
    expect(resultsOf(await readLog(session)).map(({ code, content }) => ({ code, content }))).toEqual([{ code: 'ok', content: 'No research allowed.' }]);
    const [refused] = resultsOf(await readLog(planner));
    expect(refused).toMatchObject({ name: agentToolName('researcher'), code: 'error', content: expect.stringMatching(/past this session's limit of 1 \(maxAgentDepth\)/) });
    expect(childStarts(await historyOf(planner.workflowId))).toEqual([]);
    expect(await childrenOf(planner.workflowId)).toEqual([]);
    expect(llm.requests({ model: subAgentModel('researcher') }).filter((r) => JSON.stringify(r.body).includes('research the trip'))).toEqual([]);
  });

  it('answers a call of an agent already in the lineage (a cycle) with an error result, starting no child', async () => {
    llm.script(subAgentModel('looper'), { kind: 'tool_calls', calls: [call('cycle_again', agentToolName('looper'), { task: 'do it again' })] }, { kind: 'text', text: 'I cannot call myself.' });
    const session = await start({ agent: 'looper' });
    expect(await sendAndWait(session, 'loop')).toMatchObject({ status: 'completed' });

    expect(resultsOf(await readLog(session))).toEqual([expect.objectContaining({ name: agentToolName('looper'), code: 'error', content: expect.stringContaining('"looper" is already in this chain of agents') })]);
    expect(childStarts(await historyOf(session.workflowId))).toEqual([]);
    expect(await childrenOf(session.workflowId)).toEqual([]);
  });

  it("fails the child budget_exceeded within what its parent had left, carries that type to the parent's result, and counts the child's spend in the parent's", async () => {
    const model = 'parent-budget';
    llm.script(
      model,
      { kind: 'tool_calls', calls: [call('budget_spend', agentToolName('spender'), { task: 'spend' })], usage: { inputTokens: 800, outputTokens: 200 } },
      // Played only if the parent did not count the child's spend: its budget is gone with it.
      { kind: 'text', text: 'Spent.' },
    );
    llm.script(subAgentModel('spender'), { kind: 'tool_calls', calls: [call('budget_add', 'calculator', { expression: '1+1' })], usage: { inputTokens: 1_600, outputTokens: 500 } }, { kind: 'text', text: 'Never reached.' });
    const session = await start({ model: `google:${model}`, agents: ['spender'], budgetTokens: 3_000 });
    expect(await sendAndWait(session, 'spend')).toMatchObject({ status: 'failed', failure: { type: 'budget_exceeded' } });

    const childId = (await childCall(session, 'spender')).child?.workflowId ?? '';
    // The child may spend what the parent had left when it called: 3 000 less the parent's 1 000.
    const [childStart] = await historyOf(childId);
    const childInput = childStart?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
    expect((JSON.parse(Buffer.from(childInput ?? []).toString()) as SessionInput).budgetTokens).toBe(2_000);
    const [result] = resultsOf(await readLog(session));
    expect(result).toMatchObject({ code: 'error', content: expect.stringContaining('budget_exceeded'), failure: { type: 'budget_exceeded' } });
    expect(result?.type === 'tool/result' && result.spend && tokensOf(result.spend)).toBe(2_100);
    expect(tokensOf((await session.query(stateQuery)).spend)).toBe(3_100);
    expect(llm.requests({ model })).toHaveLength(1);
  });
});

describe("a parent's step that ends while its child runs", () => {
  it('cancels the child when the turn times out and answers its call TOOL_OUTCOME_UNKNOWN, in call order, before step/end', async () => {
    const agent = HELD_AGENTS.timeout;
    const model = 'parent-timeout';
    llm.script(model, { kind: 'tool_calls', calls: [call('timeout_research', agentToolName(agent), { task: 'take your time' }), call('timeout_write', 'write_file', { path: 'sub-agents-timeout.txt', content: 'x' })] });
    llm.script(subAgentModel(agent), { kind: 'text', text: 'Too late.', hold: true, holdTimeoutMs: 60_000 });
    // Long enough for the child to start on a loaded machine (the test checks it did), short enough to wait for.
    const session = await start({ model: `anthropic:${model}`, agents: [agent], turnTimeoutMs: 4_000 });
    const turn = sendAndWait(session, 'research');
    await llm.waitForRequests(1, { model: subAgentModel(agent) }, 4_000);
    expect(await turn).toMatchObject({ status: 'failed', failure: { type: 'turn_timeout' } });

    const log = await readLog(session);
    const childId = (await childCall(session, agent)).child?.workflowId ?? '';
    expect((await client.workflow.getHandle(childId).describe()).status.name).toBe('CANCELLED');
    const line = (e: SessionEvent) => (e.type === 'tool/call' ? [`${e.type} ${e.name}`] : e.type === 'tool/result' ? [`${e.type} ${e.name} ${e.code}`] : e.type === 'step/end' ? [`${e.type} ${e.status}`] : []);
    expect(log.flatMap(line)).toEqual([
      `tool/call ${agentToolName(agent)}`,
      `tool/result ${agentToolName(agent)} TOOL_OUTCOME_UNKNOWN`,
      'tool/result write_file TOOL_NOT_STARTED',
      'step/end failed',
    ]);
    // The child's call was cancelled, not left to run.
    expect(await heldOutcome(agent)).toEqual(['aborted-by-client']);
  });

  it("cancels the child's turn and closes the child when the parent's turn is cancelled from the top", async () => {
    const agent = HELD_AGENTS.cancel;
    const model = 'parent-cancel';
    llm.script(model, { kind: 'tool_calls', calls: [call('cancel_research', agentToolName(agent), { task: 'research until stopped' })] });
    llm.script(subAgentModel(agent), { kind: 'text', text: 'Never sent.', hold: true, holdTimeoutMs: 60_000 });
    const session = await start({ model: `google:${model}`, agents: [agent] });
    const turn = sendAndWait(session, 'research');
    await llm.waitForRequests(1, { model: subAgentModel(agent) }, 30_000);
    const childId = (await childCall(session, agent)).child?.workflowId ?? '';

    expect((await cancelTurn(session)).outcome).toMatchObject({ status: 'cancelled' });
    expect(await turn).toMatchObject({ status: 'cancelled' });
    const child = client.workflow.getHandle(childId);
    expect((await child.describe()).status.name).toBe('CANCELLED');
    expect((await readLog(child)).filter((e) => e.type === 'turn/end')).toEqual([expect.objectContaining({ turn: 1, status: 'cancelled' })]);
    expect(resultsOf(await readLog(session)).map((r) => r.code)).toEqual(['TOOL_OUTCOME_UNKNOWN']);
    expect(await heldOutcome(agent)).toEqual(['aborted-by-client']);
  });
});

describe("a parent that closes while its child runs", () => {
  it('cancels the child by the parent-close policy REQUEST_CANCEL: its turn is cancelled and it closes', async () => {
    const agent = HELD_AGENTS.parentClose;
    llm.script('parent-terminated', { kind: 'tool_calls', calls: [call('close_research', agentToolName(agent), { task: 'research until your parent goes' })] });
    llm.script(subAgentModel(agent), { kind: 'text', text: 'Never sent.', hold: true, holdTimeoutMs: 60_000 });
    const session = await start({ model: 'openai:parent-terminated', agents: [agent] });
    // Caught at once: the termination fails the turn's Update while the test is still terminating.
    const turn = sendAndWait(session, 'research').catch((error: unknown) => error);
    await llm.waitForRequests(1, { model: subAgentModel(agent) }, 30_000);
    const child = client.workflow.getHandle((await childCall(session, agent)).child?.workflowId ?? '');

    await session.terminate('the operator ended the parent');
    expect(await turn).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(await eventually('the child to close', async () => {
      const { status } = await child.describe();
      return status.name === 'RUNNING' ? undefined : status.name;
    }, 20_000)).toBe('CANCELLED');
    expect((await readLog(child)).filter((e) => e.type === 'turn/end')).toEqual([expect.objectContaining({ turn: 1, status: 'cancelled' })]);
    expect(await heldOutcome(agent)).toEqual(['aborted-by-client']);
  });
});

describe('a worker process SIGKILLed while a child runs', () => {
  it("re-attaches the parent to the same child on the other worker: one child, and the parent completes with the child's answer", async () => {
    const agent = HELD_AGENTS.parentKill;
    const model = 'parent-killed';
    const usage = { parent: { inputTokens: 100, outputTokens: 20 }, child: { inputTokens: 300, outputTokens: 50 } };
    llm.script(
      model,
      { kind: 'tool_calls', calls: [call('kill_parent_research', agentToolName(agent), { task: 'research while I die' })], usage: usage.parent },
      { kind: 'text', text: 'Done, with what the researcher found.', usage: usage.parent },
    );
    // The second reply is for a retry, should the child's call have run on the killed worker too.
    llm.script(subAgentModel(agent), { kind: 'text', text: 'Found it.', hold: true, holdTimeoutMs: 60_000, usage: usage.child }, { kind: 'text', text: 'Found it.', usage: usage.child });
    const session = await start({ model: `openai:${model}`, agents: [agent] });
    const turn = sendAndWait(session, 'research');
    await llm.waitForRequests(1, { model: subAgentModel(agent) }, 30_000);
    const childId = (await childCall(session, agent)).child?.workflowId ?? '';

    // The worker that completed the parent's last workflow task holds it in its cache (and its sticky queue).
    const lastTask = (history: Awaited<ReturnType<typeof historyOf>>) => history.filter((e) => e.workflowTaskCompletedEventAttributes).at(-1)?.workflowTaskCompletedEventAttributes?.identity;
    const killed = workerOf(lastTask(await historyOf(session.workflowId)));
    await killAndReplace(killed);
    // The child answers while the parent has no worker: the parent's next task is the child's completion.
    llm.release(subAgentModel(agent));

    // A parent that could not re-attach fails its workflow tasks on replay for ever: its turn never ends.
    expect(await within(turn, 'the parent to complete on the other worker', 45_000)).toMatchObject({ status: 'completed' });
    expect(resultsOf(await readLog(session)).map(({ code, content }) => ({ code, content }))).toEqual([{ code: 'ok', content: 'Found it.' }]);
    const history = await historyOf(session.workflowId);
    expect(childStarts(history)).toHaveLength(1);
    expect(history.filter((e) => e.childWorkflowExecutionCompletedEventAttributes)).toHaveLength(1);
    // The parent's later tasks ran on another process, which replayed it from history.
    expect(lastTask(history)?.split('@')[0]).not.toBe(String(killed.pid));
    // The child's spend counted once, though the parent heard of it live and then again in its answer, before and after its replay.
    expect(tokensOf((await session.query(stateQuery)).spend)).toBe(2 * 120 + 350);
    // Answered once: by the held request, or, when the child's call ran on the killed process too, by its retry.
    expect([['completed'], ['aborted-by-client', 'completed']]).toContainEqual(llm.requests({ model: subAgentModel(agent) }).map((r) => r.outcome));
    expect(await eventually('the child in visibility', async () => ((await childrenOf(session.workflowId)).length > 0 ? childrenOf(session.workflowId) : undefined))).toEqual([childId]);
  });

  it("retries the child's LLM call on the other worker when the child's worker dies mid-call, while the parent waits", async () => {
    const agent = HELD_AGENTS.childKill;
    const model = 'parent-of-killed';
    llm.script(model, { kind: 'tool_calls', calls: [call('kill_child_research', agentToolName(agent), { task: 'research while you die' })] }, { kind: 'text', text: 'Done.' });
    llm.script(subAgentModel(agent), { kind: 'text', text: 'Lost with its worker.', hold: true, holdTimeoutMs: 60_000 }, { kind: 'text', text: 'Found on the retry.' });
    const session = await start({ model: `anthropic:${model}`, agents: [agent] });
    const turn = sendAndWait(session, 'research');
    await llm.waitForRequests(1, { model: subAgentModel(agent) }, 30_000);
    const childId = (await childCall(session, agent)).child?.workflowId ?? '';
    const child = client.workflow.getHandle(childId);
    const identity = await eventually("the worker running the child's LLM call", async () => (await child.describe()).raw.pendingActivities?.find((a) => a.activityType?.name === 'callLlm')?.lastWorkerIdentity || undefined);
    // The process started for the one the test before killed may run it: it is in its slot once it polls.
    await replacement;
    const killed = workerOf(identity);
    await killed.kill('SIGKILL');

    // The attempt is lost with the process: the heartbeat timeout (20 s) notices, and Temporal retries it elsewhere.
    expect(await within(turn, 'the parent to complete', 45_000)).toMatchObject({ status: 'completed' });
    expect(resultsOf(await readLog(session)).map(({ code, content }) => ({ code, content }))).toEqual([{ code: 'ok', content: 'Found on the retry.' }]);
    const childHistory = await historyOf(childId);
    const scheduled = childHistory.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callLlm').map((e) => String(e.eventId));
    const started = childHistory.flatMap((e) => (scheduled.includes(String(e.activityTaskStartedEventAttributes?.scheduledEventId)) ? [e.activityTaskStartedEventAttributes] : []));
    // One call, recorded once: its second attempt, on another process, after the first was lost to the heartbeat timeout.
    expect(started.map((s) => ({ attempt: s?.attempt, sameWorker: s?.identity === identity, lost: s?.lastFailure?.timeoutFailureInfo?.timeoutType }))).toEqual([
      { attempt: 2, sameWorker: false, lost: temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_HEARTBEAT },
    ]);
    expect(llm.requests({ model: subAgentModel(agent) }).map((r) => r.outcome)).toEqual(['aborted-by-client', 'completed']);
    expect(childStarts(await historyOf(session.workflowId))).toHaveLength(1);
  });
});
