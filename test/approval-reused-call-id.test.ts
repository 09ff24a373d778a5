/**
 * A provider makes tool call ids unique within one assistant message only: a later turn's
 * call may carry an earlier turn's id. Such a call is a new call. It must wait for its own
 * approval (not ride on the earlier call's), and its POST must carry its own
 * Idempotency-Key (a server honouring the key would otherwise drop it as a repeat).
 *
 * Real worker processes, the real http_request tool against a local HTTP target, and the
 * scripted LLM on the Anthropic and OpenAI wire formats, whose ids the script chooses (the
 * Gemini adapter makes up fresh ids itself). Turn 2's call is approved on a second worker
 * process, started after the first one stopped while the call waited: the new worker
 * rebuilt the call's position from history, and the key it sends is that position's.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection, WorkflowUpdateStage } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLog, startSession, type SessionHandle } from '../client/sessions';
import { startHttpTarget, type HttpTarget, type TargetRequest } from '../harness/http-target';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import type { WorkerProcess } from '../harness/worker-process';
import { decideApprovalUpdate, sendUpdate, stateQuery, type PendingApproval, type TurnOutcome } from '../contracts/api';
import { positionIdempotencyKey } from '../contracts/tools/idempotency-key';
import { eventually } from './support/eventually';
import { agentWorkerEnv } from '../harness/worker-env';
import { startWorkerProcess } from './support/worker-processes';
import { devServerAddress, devServerNamespace, uniqueTaskQueue } from './temporal-env';

const PROVIDERS = ['anthropic', 'openai'] as const;
type Provider = (typeof PROVIDERS)[number];
/** The id both turns' calls carry, shaped as each provider shapes its own. */
const REUSED: Record<Provider, string> = { anthropic: 'toolu_01reusedAcrossTurns', openai: 'call_reusedAcrossTurns' };

interface Case {
  provider: Provider;
  session: SessionHandle;
  /** The path prefix of this session's requests on the HTTP target. */
  prefix: string;
  /** What `state` listed once turn 2 stopped moving: its call waiting, or nothing. */
  waitingInTurn2: PendingApproval[];
  /** The POSTs of turn 2 the target had seen by then. */
  sentBeforeDecision: number;
  /** The answers to the decisions sent on the second worker: the first one, then the same one again. */
  decisions: { applied: boolean }[];
  outcomes: TurnOutcome[];
}

let llm: ScriptedLlm;
let target: HttpTarget;
let client: Client;
const workers: WorkerProcess[] = [];
const cases = new Map<Provider, Case>();
let restartedAt = 0;

const post = (url: string) => ({ method: 'POST', url, body: '{"item":"book"}', headers: { 'content-type': 'application/json' } });

const caseOf = (provider: Provider): Case => {
  const found = cases.get(provider);
  if (!found) throw new Error(`no session on ${provider}: the scenario in beforeAll did not get that far`);
  return found;
};

async function send(session: SessionHandle, text: string) {
  return session.startUpdate(sendUpdate, { args: [{ text }], waitForStage: WorkflowUpdateStage.ACCEPTED });
}

/** Resolves with what `state` lists once the turn waits for a human or has ended, whichever comes first. */
async function waitingOrEnded(session: SessionHandle, turn: number): Promise<PendingApproval[]> {
  return eventually(`turn ${turn} of ${session.workflowId} to wait for approval or end`, async () => {
    const { pendingApprovals } = await session.query(stateQuery);
    if (pendingApprovals.some((a) => a.turn === turn)) return pendingApprovals;
    const ended = (await readLog(session)).some((e) => e.type === 'turn/end' && e.turn === turn);
    return ended ? pendingApprovals : undefined;
  });
}

beforeAll(async () => {
  llm = await startScriptedLlm();
  target = await startHttpTarget();
  const taskQueue = uniqueTaskQueue('reused-call-id');
  client = new Client({ connection: await Connection.connect({ address: devServerAddress() }), namespace: devServerNamespace() });
  const env = agentWorkerEnv({ address: devServerAddress(), namespace: devServerNamespace(), taskQueue, llmUrl: llm.url, allowlist: [target.host] });
  workers.push(await startWorkerProcess('reused-call-id-first', env));

  const run = randomUUID().slice(0, 8);
  const second = new Map<Provider, Promise<TurnOutcome>>();
  await Promise.all(
    PROVIDERS.map(async (provider) => {
      const model = `reused-call-id-${provider}-${run}`;
      const prefix = `/${run}/${provider}`;
      const id = REUSED[provider];
      llm.script(
        model,
        { kind: 'tool_calls', calls: [{ id, name: 'http_request', input: post(`${target.url}${prefix}/first`) }] },
        { kind: 'text', text: 'The first order is placed.' },
        { kind: 'tool_calls', calls: [{ id, name: 'http_request', input: post(`${target.url}${prefix}/second`) }] },
        { kind: 'text', text: 'The second order is placed.' },
      );
      const session = await startSession(client, { AGENT_TASK_QUEUE: taskQueue }, { model: `${provider}:${model}`, workflowId: `reused-call-id-${provider}-${run}`, approvalRequired: ['http_request'] });
      const first = await send(session, 'order a book');
      const [waiting] = await waitingOrEnded(session, 1);
      if (waiting?.callId !== id) throw new Error(`turn 1 on ${provider} did not wait for approval of ${id}`);
      await session.executeUpdate(decideApprovalUpdate, { args: [{ callId: id, approved: true }] });
      const outcomes = [await first.result()];

      second.set(provider, (await send(session, 'order another one')).result());
      const waitingInTurn2 = await waitingOrEnded(session, 2);
      cases.set(provider, { provider, session, prefix, waitingInTurn2, sentBeforeDecision: target.requests(`${prefix}/second`).length, decisions: [], outcomes });
    }),
  );

  // Turn 2's calls wait (or, unfixed, have run): the worker that saw them ask stops, and a
  // new one takes over; it knows the waiting calls only from history.
  await workers[0]?.kill('SIGTERM');
  restartedAt = Date.now();
  workers.push(await startWorkerProcess('reused-call-id-second', env));

  await Promise.all(
    PROVIDERS.map(async (provider) => {
      const c = caseOf(provider);
      const decide = () => c.session.executeUpdate(decideApprovalUpdate, { args: [{ callId: REUSED[provider], approved: true }] });
      if (c.waitingInTurn2.length > 0) c.decisions.push(await decide());
      c.outcomes.push(await (second.get(provider) as Promise<TurnOutcome>));
      c.decisions.push(await decide());
    }),
  );
}, 180_000);

afterAll(async () => {
  await Promise.all([...cases.values()].map((c) => c.session.terminate('reused call id test cleanup').catch(() => undefined)));
  for (const worker of workers) await worker.kill('SIGKILL');
  await client?.connection.close();
  await target?.close();
  await llm?.close();
});

const keyOf = (request: TargetRequest | undefined) => request?.headers['idempotency-key'];

describe.each(PROVIDERS)('a tool call id reused by a later turn, on %s', (provider) => {
  it("waits for its own approval: turn 2's call with turn 1's id sends nothing until a human approves it, then runs once", async () => {
    const c = caseOf(provider);
    expect(c.waitingInTurn2).toEqual([expect.objectContaining({ turn: 2, step: 1, callId: REUSED[provider], name: 'http_request' })]);
    expect(c.sentBeforeDecision).toBe(0);
    expect(c.outcomes.map((o) => [o.turn, o.status])).toEqual([
      [1, 'completed'],
      [2, 'completed'],
    ]);
    expect(target.requests(`${c.prefix}/second`)).toHaveLength(1);
    const results = (await readLog(c.session)).flatMap((e) => (e.type === 'tool/result' ? [[e.turn, e.callId, e.code]] : []));
    expect(results).toEqual([
      [1, REUSED[provider], 'ok'],
      [2, REUSED[provider], 'ok'],
    ]);
  });

  it('gives each POST its own Idempotency-Key, from the workflow id, turn, step and call id, also when a new worker replayed the waiting call before sending it', () => {
    const c = caseOf(provider);
    const [first] = target.requests(`${c.prefix}/first`);
    const [second] = target.requests(`${c.prefix}/second`);
    // Sent by the second worker, which knew the call's turn and step only from history.
    expect(second?.at).toBeGreaterThan(restartedAt);
    expect(keyOf(first)).toBe(positionIdempotencyKey(c.session.workflowId, { turn: 1, step: 1, callId: REUSED[provider] }));
    expect(keyOf(second)).toBe(positionIdempotencyKey(c.session.workflowId, { turn: 2, step: 1, callId: REUSED[provider] }));
    expect(keyOf(second)).not.toBe(keyOf(first));
  });

  it("applies a decision naming the id to the call waiting now, once: the same approval again changes nothing", () => {
    const c = caseOf(provider);
    expect(c.decisions).toEqual([{ applied: true }, { applied: false }]);
    expect(target.requests(c.prefix).map((r) => r.path)).toEqual([`${c.prefix}/first`, `${c.prefix}/second`]);
  });
});
