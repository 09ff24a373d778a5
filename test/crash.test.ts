/**
 * A real worker PROCESS is killed with SIGKILL while sessions are at five different points
 * of a step, then a new worker process takes over. Each session must end in the state the
 * contract for unanswered tool calls (issue 4) says: no completed tool ran twice, no recorded
 * result was lost, and TOOL_OUTCOME_UNKNOWN appears exactly where the outcome is unknown.
 * The evidence is what the local servers saw: the scripted LLM's request log and the HTTP
 * target's.
 *
 * One kill serves every case, on all three providers at once: Temporal only notices a lost
 * worker when a heartbeat timeout passes (10 s for http_request, 20 s for the LLM call), so
 * a kill per case would cost minutes.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection, WorkflowUpdateStage, type WorkflowUpdateHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLog, sendAndWait, startSession, turnOutcomeOf, type SessionHandle, type TurnResult } from '../client/sessions';
import { startHttpTarget, type HttpTarget, type TargetRequest } from '../harness/http-target';
import { startScriptedLlm, type ScriptedLlm, type ScriptedReply } from '../testing/scripted-llm/server';
import { agentWorkerEnv } from '../harness/worker-env';
import type { WorkerProcess } from '../harness/worker-process';
import { decideApprovalUpdate, sendUpdate, stateQuery, type SessionInput, type TurnOutcome } from '../contracts/api';
import type { SessionEvent } from '../contracts/session-log';
import { positionIdempotencyKey } from '../contracts/tools/idempotency-key';
import { eventually } from './support/eventually';
import { unpairedToolCalls } from './support/pairing';
import { startWorkerProcess } from './support/worker-processes';
import { devServerAddress, devServerNamespace, uniqueTaskQueue } from './temporal-env';

const PROVIDERS = ['anthropic', 'openai', 'google'] as const;
type Provider = (typeof PROVIDERS)[number];
const KINDS = ['llm', 'read', 'write', 'dispatching', 'approval'] as const;
type Kind = (typeof KINDS)[number];

interface Case {
  kind: Kind;
  provider: Provider;
  model: string;
  /** The path prefix of this session's requests on the HTTP target. */
  prefix: string;
  session: SessionHandle;
  send: WorkflowUpdateHandle<TurnOutcome>;
  outcome?: TurnResult;
}

let llm: ScriptedLlm;
let target: HttpTarget;
let client: Client;
let taskQueue: string;
const workers: WorkerProcess[] = [];
const cases = new Map<string, Case>();
let killedAt = 0;

const key = (kind: Kind, provider: Provider) => `${kind}/${provider}`;
const caseOf = (kind: Kind, provider: Provider): Case => {
  const found = cases.get(key(kind, provider));
  if (!found) throw new Error(`no session for ${key(kind, provider)}: the scenario in beforeAll did not get that far`);
  return found;
};

/**
 * The target's plan. A path ending in `/held-once` is held on its first request (the one
 * the kill interrupts) and answered on the retry; `/held` is never answered.
 */
function plan(request: TargetRequest) {
  if (request.path.endsWith('/held')) return 'hold' as const;
  if (request.path.endsWith('/held-once')) return request.nth === 0 ? ('hold' as const) : { status: 200, body: `answered on request ${request.nth + 1}` };
  return { status: request.method === 'POST' ? 201 : 200, body: `answered ${request.method} ${request.path}` };
}

const get = (url: string) => ({ method: 'GET', url });
const post = (url: string) => ({ method: 'POST', url, body: '{"item":"book"}', headers: { 'content-type': 'application/json' } });

/** The first reply of each kind's session; every session then answers with text. */
function firstReply(kind: Kind, base: string): ScriptedReply {
  switch (kind) {
    case 'llm':
      // Hangs after its first words, with pings, until the kill cuts the connection.
      return { kind: 'text', text: 'Let me think about that', stall: { ms: -1, pingEveryMs: 500 } };
    case 'read':
      return { kind: 'tool_calls', calls: [{ name: 'http_request', input: get(`${base}/fast`) }, { name: 'http_request', input: get(`${base}/held-once`) }] };
    case 'write':
      return { kind: 'tool_calls', calls: [{ name: 'http_request', input: post(`${base}/held`) }] };
    case 'dispatching':
      return { kind: 'tool_calls', calls: [{ name: 'http_request', input: get(`${base}/held-once`) }, { name: 'http_request', input: post(`${base}/orders`) }] };
    case 'approval':
      return { kind: 'tool_calls', calls: [{ name: 'http_request', input: post(`${base}/orders`) }] };
  }
}

async function lastEventIs(session: SessionHandle, type: SessionEvent['type']): Promise<true | undefined> {
  const events = await readLog(session);
  return events.at(-1)?.type === type ? true : undefined;
}

/** Resolves when the session is exactly where its kind says the kill must find it. */
async function killPoint(c: Case): Promise<void> {
  const what = `${key(c.kind, c.provider)} to reach its kill point`;
  switch (c.kind) {
    case 'llm':
      await llm.waitForRequests(1, { model: c.model }, 60_000);
      // The stream is open and has sent its first words: the activity is mid-stream.
      await eventually(what, () => (llm.requests({ model: c.model })[0]?.outcome === 'pending' ? true : undefined), 10_000);
      return;
    case 'read':
      await target.waitFor(`${c.prefix}/held-once`, 1, 60_000);
      // The other read has finished and its result is in the log before the kill.
      await eventually(what, async () => ((await readLog(c.session)).some((e) => e.type === 'tool/result') ? true : undefined), 30_000);
      return;
    case 'write':
      await target.waitFor(`${c.prefix}/held`, 1, 60_000);
      return;
    case 'dispatching':
      await target.waitFor(`${c.prefix}/held-once`, 1, 60_000);
      return;
    case 'approval':
      // The assistant message is committed and nothing after it: the call waits for a human.
      await eventually(what, async () => ((await c.session.query(stateQuery)).pendingApprovals.length === 1 ? true : undefined), 60_000);
      await eventually(what, () => lastEventIs(c.session, 'assistant'), 5_000);
      return;
  }
}

beforeAll(async () => {
  llm = await startScriptedLlm();
  target = await startHttpTarget(plan);
  taskQueue = uniqueTaskQueue('crash');
  client = new Client({ connection: await Connection.connect({ address: devServerAddress() }), namespace: devServerNamespace() });
  const env = agentWorkerEnv({ address: devServerAddress(), namespace: devServerNamespace(), taskQueue, llmUrl: llm.url, allowlist: [target.host] });
  workers.push(await startWorkerProcess('crash-before-kill', env));

  const run = randomUUID().slice(0, 8);
  await Promise.all(
    PROVIDERS.flatMap((provider) =>
      KINDS.map(async (kind) => {
        const model = `crash-${kind}-${provider}-${run}`;
        const prefix = `/${run}/${kind}/${provider}`;
        llm.script(model, firstReply(kind, `${target.url}${prefix}`), { kind: 'text', text: `${kind} on ${provider}: done` });
        const input: Partial<SessionInput> = kind === 'approval' ? { approvalRequired: ['http_request'] } : {};
        const session = await startSession(client, { AGENT_TASK_QUEUE: taskQueue }, { model: `${provider}:${model}`, workflowId: `crash-${kind}-${provider}-${run}`, ...input });
        const send = await session.startUpdate(sendUpdate, { args: [{ text: `please do the ${kind} thing` }], waitForStage: WorkflowUpdateStage.ACCEPTED });
        const c: Case = { kind, provider, model, prefix, session, send };
        cases.set(key(kind, provider), c);
        await killPoint(c);
      }),
    ),
  );

  killedAt = Date.now();
  await workers[0]?.kill('SIGKILL');
  workers.push(await startWorkerProcess('crash-after-kill', env));

  for (const provider of PROVIDERS) {
    const c = caseOf('approval', provider);
    // The new worker rebuilt the waiting call from history: approve it there.
    const [pending] = (await c.session.query(stateQuery)).pendingApprovals;
    if (!pending) throw new Error(`the approval of ${key('approval', provider)} did not survive the crash`);
    await c.session.executeUpdate(decideApprovalUpdate, { args: [{ callId: pending.callId, approved: true }] });
  }
  await Promise.all(
    [...cases.values()].map(async (c) => {
      c.outcome = await c.send.result().then(
        (o) => ({ status: o.status, turn: o.turn }),
        (error: unknown) => turnOutcomeOf(error) ?? Promise.reject(error),
      );
    }),
  );
}, 240_000);

afterAll(async () => {
  await Promise.all([...cases.values()].map((c) => c.session.terminate('crash test cleanup').catch(() => undefined)));
  for (const worker of workers) await worker.kill('SIGKILL');
  await client?.connection.close();
  await target?.close();
  await llm?.close();
});

const toolResults = (events: SessionEvent[]) => events.flatMap((e) => (e.type === 'tool/result' ? [{ callId: e.callId, code: e.code, content: e.content, at: e.at }] : []));
const assistantEvents = (events: SessionEvent[]) => events.filter((e) => e.type === 'assistant');
/** The tool call ids of the first assistant message, in call order (Gemini's are made up by the adapter). */
const callIdsOf = (events: SessionEvent[]) => events.flatMap((e) => (e.type === 'assistant' ? [e.message.toolCalls.map((c) => c.id)] : []))[0] ?? [];
const allPaired = (model: string) => llm.requests({ model }).every((r) => unpairedToolCalls(r.body).length === 0);

// The suite's worker processes run the cached workflow bundle (test/support/worker-processes.ts):
// every session here, before and after the kill, ran on a worker given AGENT_WORKFLOW_BUNDLE.
it('runs both worker processes on the prebuilt workflow bundle AGENT_WORKFLOW_BUNDLE names', () => {
  for (const worker of workers) expect(worker.output()).toContain('worker: runs the workflow bundle AGENT_WORKFLOW_BUNDLE names');
});

describe.each(PROVIDERS)('SIGKILL of the worker process on %s, then a new worker', (provider) => {
  it('during the LLM stream: the call is retried on the new worker and the turn completes; the LLM saw 2 requests, the first cut by the kill', async () => {
    const c = caseOf('llm', provider);
    expect(c.outcome).toEqual({ status: 'completed', turn: 1 });
    const requests = llm.requests({ model: c.model });
    expect(requests.map((r) => r.outcome)).toEqual(['aborted-by-client', 'completed']);
    expect(requests[1]?.at).toBeGreaterThan(killedAt);
    const events = await readLog(c.session);
    expect(assistantEvents(events).map((e) => e.type === 'assistant' && e.message.text)).toEqual([`llm on ${provider}: done`]);
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', status: 'completed', reason: 'answered' });
  });

  it('during a read-only tool: the interrupted GET is retried and answered, the GET that had completed is not sent again, and its recorded result is kept', async () => {
    const c = caseOf('read', provider);
    expect(c.outcome).toEqual({ status: 'completed', turn: 1 });
    const events = await readLog(c.session);
    const [fast, held] = callIdsOf(events);
    const results = toolResults(events);
    expect(results.map((r) => [r.callId, r.code])).toEqual(expect.arrayContaining([[fast, 'ok'], [held, 'ok']]));
    expect(results).toHaveLength(2);
    const kept = results.find((r) => r.callId === fast);
    expect(kept?.at).toBeLessThan(killedAt);
    expect(kept?.content).toContain(`answered GET ${c.prefix}/fast`);
    expect(results.find((r) => r.callId === held)?.content).toContain('answered on request 2');

    expect(target.requests(`${c.prefix}/fast`)).toHaveLength(1);
    expect(target.requests(`${c.prefix}/held-once`).map((r) => r.outcome)).toEqual(['closed', 'answered']);
    expect(llm.requests({ model: c.model })).toHaveLength(2);
    expect(allPaired(c.model)).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', status: 'completed' });
  });

  it('shows TOOL_OUTCOME_UNKNOWN for the side-effecting call a SIGKILL interrupted; the target saw exactly one request, with its Idempotency-Key; the session accepts the next message', async () => {
    const c = caseOf('write', provider);
    expect(c.outcome).toMatchObject({ status: 'failed', turn: 1, failure: { type: 'heartbeat_timeout' } });
    const events = await readLog(c.session);
    const [callId] = callIdsOf(events);
    expect(toolResults(events).map((r) => [r.callId, r.code])).toEqual([[callId, 'TOOL_OUTCOME_UNKNOWN']]);
    expect(events.slice(-2)).toMatchObject([
      { type: 'step/end', status: 'failed', failure: { type: 'heartbeat_timeout' } },
      { type: 'turn/end', status: 'failed', failure: { type: 'heartbeat_timeout' } },
    ]);

    const next = await sendAndWait(c.session, 'did my order go through?');
    expect(next).toEqual({ status: 'completed', turn: 2, reason: 'answered' });
    const seen = target.requests(`${c.prefix}/held`);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.method).toBe('POST');
    expect(seen[0]?.headers['idempotency-key']).toBe(positionIdempotencyKey(c.session.workflowId, { turn: 1, step: 1, callId: callId ?? '' }));
    const requests = llm.requests({ model: c.model });
    expect(requests).toHaveLength(2);
    expect(JSON.stringify(requests[1]?.body)).toContain('TOOL_OUTCOME_UNKNOWN');
    expect(allPaired(c.model)).toBe(true);
  });

  it('just after the assistant message is recorded, with its first tool in flight: the step goes on from the recorded message (no new LLM request), and the side-effecting call not yet started runs exactly once', async () => {
    const c = caseOf('dispatching', provider);
    expect(c.outcome).toEqual({ status: 'completed', turn: 1 });
    const events = await readLog(c.session);
    const [read, write] = callIdsOf(events);
    expect(toolResults(events).map((r) => [r.callId, r.code])).toEqual([
      [read, 'ok'],
      [write, 'ok'],
    ]);
    expect(assistantEvents(events)).toHaveLength(2);
    expect(llm.requests({ model: c.model })).toHaveLength(2);
    expect(target.requests(`${c.prefix}/held-once`).map((r) => r.outcome)).toEqual(['closed', 'answered']);
    const orders = target.requests(`${c.prefix}/orders`);
    expect(orders).toHaveLength(1);
    expect(orders[0]?.at).toBeGreaterThan(killedAt);
    expect(orders[0]?.headers['idempotency-key']).toBe(positionIdempotencyKey(c.session.workflowId, { turn: 1, step: 1, callId: write ?? '' }));
    expect(allPaired(c.model)).toBe(true);
  });

  it('just after the assistant message is recorded, waiting for approval: the new worker still waits for the same call, and once approved it runs exactly once', async () => {
    const c = caseOf('approval', provider);
    expect(c.outcome).toEqual({ status: 'completed', turn: 1 });
    const events = await readLog(c.session);
    const [callId] = callIdsOf(events);
    expect(toolResults(events).map((r) => [r.callId, r.code])).toEqual([[callId, 'ok']]);
    expect(llm.requests({ model: c.model })).toHaveLength(2);
    const orders = target.requests(`${c.prefix}/orders`);
    expect(orders).toHaveLength(1);
    expect(orders[0]?.at).toBeGreaterThan(killedAt);
    expect(orders[0]?.headers['idempotency-key']).toBe(positionIdempotencyKey(c.session.workflowId, { turn: 1, step: 1, callId: callId ?? '' }));
  });
});
