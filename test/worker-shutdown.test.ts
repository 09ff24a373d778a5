/**
 * SIGTERM, as a deploy sends it: the worker stops polling, lets what runs finish within
 * AGENT_SHUTDOWN_GRACE_MS and exits 0, also when its Temporal server is gone.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection, WorkflowUpdateStage } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLog, sendAndWait, startSession } from '../client/sessions';
import { startHttpTarget, type HttpTarget } from '../harness/http-target';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { findFreePort, startDevServer } from '../harness/dev-server';
import { agentWorkerEnv } from '../harness/worker-env';
import type { WorkerProcess } from '../harness/worker-process';
import { sendUpdate } from '../contracts/api';
import { conversationOf } from '../contracts/conversation';
import { devServerAddress, devServerNamespace } from './temporal-env';
import { eventually } from './support/eventually';
import { startWorkerProcess } from './support/worker-processes';

let llm: ScriptedLlm;
let target: HttpTarget;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  llm = await startScriptedLlm();
  target = await startHttpTarget((request) => (request.path.startsWith('/slow') ? 'hold' : { status: 200, body: 'ok' }));
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill('SIGKILL')));
  await target?.close();
  await llm?.close();
});

async function startWorker(name: string, address: string, taskQueue: string, graceMs: number): Promise<WorkerProcess> {
  const env = agentWorkerEnv({
    address,
    taskQueue,
    llmUrl: llm.url,
    allowlist: [target.host],
    extra: { AGENT_SHUTDOWN_GRACE_MS: String(graceMs) },
  });
  const worker = await startWorkerProcess(name, env);
  workers.push(worker);
  return worker;
}

/** Resolves once `text` is in the worker's output; fails at once if the worker exits without it. */
async function printed(worker: WorkerProcess, text: string): Promise<void> {
  const exitedWithout = worker.exited.then(() => {
    if (!worker.output().includes(text)) throw new Error(`the worker exited without printing "${text}":\n${worker.output()}`);
  });
  await Promise.race([eventually(`the worker to print "${text}"`, () => (worker.output().includes(text) ? true : undefined), 30_000, 50), exitedWithout]);
}

describe('SIGTERM', () => {
  it('stops polling and lets a running tool call finish, then exits 0; its result is kept, not TOOL_OUTCOME_UNKNOWN', async () => {
    const taskQueue = `shutdown-${randomUUID()}`;
    const connection = await Connection.connect({ address: devServerAddress() });
    const client = new Client({ connection, namespace: devServerNamespace() });
    try {
      const first = await startWorker('shutdown-graceful', devServerAddress(), taskQueue, 20_000);
      const model = `shutdown-${randomUUID()}`;
      llm.script(model, { kind: 'tool_calls', calls: [{ name: 'http_request', input: { method: 'GET', url: `${target.url}/slow` } }] }, { kind: 'text', text: 'fetched' });
      const session = await startSession(client, { AGENT_TASK_QUEUE: taskQueue }, { model: `anthropic:${model}` });
      const turn = sendAndWait(session, 'fetch the slow page');
      await target.waitFor('/slow', 1);

      const stoppedAt = Date.now();
      process.kill(first.pid, 'SIGTERM');
      await printed(first, 'SIGTERM: no new tasks');
      // The call was running when the signal came; it ends now, inside the grace.
      expect(target.release('/slow', { status: 200, body: 'slow page' })).toBe(1);
      expect(await first.exited).toBe(0);
      expect(Date.now() - stoppedAt).toBeLessThan(20_000);

      // The next worker finishes the turn with the result the stopped one reported.
      await startWorker('shutdown-next', devServerAddress(), taskQueue, 20_000);
      await expect(turn).resolves.toMatchObject({ status: 'completed' });
      const toolResult = conversationOf(await readLog(session)).find((m) => m.role === 'tool');
      expect(toolResult).toMatchObject({ name: 'http_request', code: 'ok' });
      expect(JSON.stringify(toolResult)).toContain('slow page');
      expect(target.requests('/slow')).toHaveLength(1);
    } finally {
      await connection.close();
    }
  });

  it('exits 0 within AGENT_SHUTDOWN_GRACE_MS when the Temporal server is gone, with a tool call still running', async () => {
    const server = await startDevServer({ ip: '127.0.0.1', port: await findFreePort(), uiPort: false, output: 'ignore' });
    const graceMs = 3_000;
    const taskQueue = `shutdown-gone-${randomUUID()}`;
    const connection = await Connection.connect({ address: server.address });
    let worker: WorkerProcess;
    try {
      worker = await startWorker('shutdown-server-gone', server.address, taskQueue, graceMs);
      const model = `shutdown-gone-${randomUUID()}`;
      // Never answered: the call is still running when the server goes and the signal comes.
      llm.script(model, { kind: 'tool_calls', calls: [{ name: 'http_request', input: { method: 'GET', url: `${target.url}/slow?gone` } }] });
      const session = await startSession(new Client({ connection }), { AGENT_TASK_QUEUE: taskQueue }, { model: `anthropic:${model}` });
      // Accepted is enough: nothing of this client may still be waiting when its connection closes.
      await session.startUpdate(sendUpdate, { args: [{ text: 'fetch it' }], waitForStage: WorkflowUpdateStage.ACCEPTED });
      await target.waitFor('/slow?gone', 1);
    } finally {
      await connection.close();
      await server.stop();
    }
    const stoppedAt = Date.now();
    process.kill(worker.pid, 'SIGTERM');
    expect(await worker.exited).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(graceMs + 1_000);
  });
});
