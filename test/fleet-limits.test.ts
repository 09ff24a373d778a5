/**
 * Fleet limits on real worker processes (docs/fleet-limits.md): two workers of one task
 * queue, each given the same AGENT_LIMITS_FILE, against a scripted LLM that enforces the
 * same limit itself and answers 429 above it. The limit must hold across both processes;
 * a call held by it waits visibly, can be cancelled while it waits, and interactive
 * sessions' calls go before batch ones'.
 */
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Client, Connection, WorkflowNotFoundError, WorkflowUpdateStage } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readProgress, describeProgress } from '../client/progress';
import { sendAndWait, startSession, turnOutcomeOf, type SessionHandle } from '../client/sessions';
import { cancelTurn } from '../client/turn-control';
import { sendUpdate, type SessionInput } from '../contracts/api';
import { limiterWorkflowId, type FleetLimit } from '../contracts/fleet-limits';
import { agentWorkerEnv } from '../harness/worker-env';
import type { WorkerProcess } from '../harness/worker-process';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { windowPeak } from '../testing/scripted-llm/window-peak';
import { eventually } from './support/eventually';
import { useTempDir } from './support/temp-dir';
import { startWorkerProcess } from './support/worker-processes';
import { devServerAddress, devServerNamespace, uniqueTaskQueue } from './temporal-env';

const run = randomUUID().slice(0, 8);
/** The token limit's window, short so the test is: 3 000 input tokens in any 2 s. */
const WINDOW_MS = 2_000;
const TOKENS_PER_WINDOW = 3_000;
const TOKENS_MODEL = `echo-fleet-tokens-${run}`;
/** Every openai model shares one call slot. */
const SLOT_HOLDER = `fleet-slot-holder-${run}`;

const tempDir = useTempDir('fleet-limits-');
let llm: ScriptedLlm;
let client: Client;
let taskQueue: string;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  llm = await startScriptedLlm({ demo: false });
  // The provider's own limit, which the fleet's must keep every call under.
  llm.setRateLimit(TOKENS_MODEL, { inputTokens: TOKENS_PER_WINDOW, windowMs: WINDOW_MS });
  taskQueue = uniqueTaskQueue('fleet');
  const limits: Array<Partial<FleetLimit>> = [
    { provider: 'anthropic', model: TOKENS_MODEL, inputTokensPerMinute: (TOKENS_PER_WINDOW * 60_000) / WINDOW_MS, windowSeconds: WINDOW_MS / 1000 },
    { provider: 'openai', concurrentCalls: 1 },
  ];
  const file = path.join(tempDir(), 'limits.json');
  await writeFile(file, JSON.stringify({ limits }));
  const env = agentWorkerEnv({ address: devServerAddress(), namespace: devServerNamespace(), taskQueue, llmUrl: llm.url, extra: { AGENT_LIMITS_FILE: file } });
  workers.push(...(await Promise.all([startWorkerProcess('fleet-a', env), startWorkerProcess('fleet-b', env)])));
  client = new Client({ connection: await Connection.connect({ address: devServerAddress() }), namespace: devServerNamespace() });
}, 120_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill()));
  await llm?.close();
});

function session(name: string, input: Partial<SessionInput> & Pick<SessionInput, 'model'>): Promise<SessionHandle> {
  return startSession(client, { AGENT_TASK_QUEUE: taskQueue }, { workflowId: `fleet-${name}-${run}`, ...input });
}

/** The session's LLM call is held by the limits: its activity heartbeats `waiting`, and watch's line says what for. */
async function waitingLine(handle: SessionHandle): Promise<string> {
  return eventually(`${handle.workflowId} to wait for the fleet limits`, async () => describeProgress(await readProgress(client, handle), Date.now()).find((line) => line.includes('waiting for')), 30_000);
}

describe('fleet limits across two worker processes', () => {
  it('keeps three sessions on two workers under a shared input-token limit: the provider never had to refuse one', async () => {
    // About 1 200 tokens a request with the tools' schemas: two fit in a window, three sessions asking at once do not.
    const system = `You answer briefly. ${'Background the model does not need. '.repeat(32)}`;
    const sessions = await Promise.all([1, 2, 3].map((n) => session(`tokens-${n}`, { model: `anthropic:${TOKENS_MODEL}`, system })));
    await Promise.all(
      sessions.map(async (handle, n) => {
        for (const turn of [1, 2, 3]) expect((await sendAndWait(handle, `session ${n} turn ${turn}`)).status).toBe('completed');
      }),
    );
    const requests = llm.requests({ model: TOKENS_MODEL });
    expect(requests).toHaveLength(9);
    expect(requests.filter((r) => r.replyKind === 'rate_limited')).toEqual([]);
    expect(windowPeak(requests, WINDOW_MS).tokens).toBeLessThanOrEqual(TOKENS_PER_WINDOW);
    // The limit bound: three of these requests are more than a window allows.
    expect(Math.min(...requests.map((r) => r.tokens)) * 3).toBeGreaterThan(TOKENS_PER_WINDOW);
  }, 120_000);

  it('shows a held call as waiting, lets it be cancelled while it waits, and grants interactive calls before batch ones', async () => {
    llm.script(SLOT_HOLDER, { kind: 'text', text: 'held until the test lets go', hold: true, holdTimeoutMs: 110_000 });
    const holder = await session('slot-holder', { model: `openai:${SLOT_HOLDER}` });
    const held = holder.executeUpdate(sendUpdate, { args: [{ text: 'take the slot' }] });
    await llm.waitForRequests(1, { model: SLOT_HOLDER }, 30_000);

    const cancelled = await session('slot-cancelled', { model: `openai:echo-slot-cancelled-${run}` });
    const cancelledTurn = await cancelled.startUpdate(sendUpdate, { args: [{ text: 'wait for the slot' }], waitForStage: WorkflowUpdateStage.ACCEPTED });
    expect(await waitingLine(cancelled)).toMatch(/^turn 1 · step 1\/\d+ · llm openai:echo-slot-cancelled-\S+ · waiting for a free call slot of openai, ~\d+ s$/);
    expect((await cancelTurn(cancelled)).cancelled).toBe(true);
    expect((await cancelledTurn.result().catch(turnOutcomeOf))?.status).toBe('cancelled');
    // It left the queue: the limiter's page says so.
    const limiter = client.workflow.getHandle(limiterWorkflowId(taskQueue, 'openai'));
    await eventually('the cancelled call to leave the queue', async () => ((await limiter.query<{ currentDetails: string }>('__temporal_workflow_metadata')).currentDetails === '1 in flight, none waiting' ? true : undefined), 10_000);

    const batch = await session('slot-batch', { model: `openai:echo-slot-batch-${run}`, priority: 'batch' });
    const batchTurn = batch.executeUpdate(sendUpdate, { args: [{ text: 'batch work' }] });
    await waitingLine(batch);
    const interactive = await session('slot-interactive', { model: `openai:echo-slot-interactive-${run}` });
    const interactiveTurn = interactive.executeUpdate(sendUpdate, { args: [{ text: 'a person waits' }] });
    await waitingLine(interactive);

    expect(llm.release(SLOT_HOLDER)).toBe(1);
    await Promise.all([held, batchTurn, interactiveTurn]);
    const order = llm.requests({ provider: 'openai' }).map((r) => r.model);
    // The cancelled call never reached the provider, and its place did not hold the others up.
    expect(order).toEqual([SLOT_HOLDER, `echo-slot-interactive-${run}`, `echo-slot-batch-${run}`]);
  }, 120_000);

  it('asks no limiter for a provider the limits do not name', async () => {
    const google = await session('unlimited', { model: `google:echo-unlimited-${run}` });
    expect((await sendAndWait(google, 'no limit here')).status).toBe('completed');
    await expect(client.workflow.getHandle(limiterWorkflowId(taskQueue, 'google')).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    expect((await client.workflow.getHandle(limiterWorkflowId(taskQueue, 'anthropic')).describe()).status.name).toBe('RUNNING');
  }, 60_000);
});
