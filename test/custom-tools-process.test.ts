/**
 * Two real worker PROCESSES serve custom tools; the one in the middle of a side-effecting
 * call is killed with SIGKILL, and the other takes over (both started at once: a worker
 * process takes seconds to start). The call ran once, and only once: the
 * session answers it TOOL_OUTCOME_UNKNOWN (never a second attempt that could charge twice),
 * and the next turn runs on the new process.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLog, sendAndWait, startSession } from '../client/sessions';
import { positionIdempotencyKey } from '../contracts/tools/idempotency-key';
import { PROJECT_ROOT } from '../harness/temporal-binaries';
import { agentWorkerEnv } from '../harness/worker-env';
import { spawnWorker, type WorkerProcess } from '../harness/worker-process';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { eventually } from './support/eventually';
import { workerLogFile } from './support/worker-processes';
import { devServerAddress, devServerNamespace, uniqueTaskQueue } from './temporal-env';

const ENTRY = path.join(PROJECT_ROOT, 'test', 'support', 'custom-tools-worker.ts');

let llm: ScriptedLlm;
let client: Client;
let marks: string;
let env: NodeJS.ProcessEnv;
const workers: WorkerProcess[] = [];

async function startWorker(name: string): Promise<WorkerProcess> {
  await rm(workerLogFile(name), { force: true });
  const worker = await spawnWorker({ env, logFile: workerLogFile(name), entry: ENTRY });
  workers.push(worker);
  await worker.ready;
  return worker;
}

beforeAll(async () => {
  llm = await startScriptedLlm();
  client = new Client({ connection: await Connection.connect({ address: devServerAddress() }), namespace: devServerNamespace() });
  marks = path.join(await mkdtemp(path.join(tmpdir(), 'custom-tools-')), 'marks.txt');
  env = agentWorkerEnv({ address: devServerAddress(), namespace: devServerNamespace(), taskQueue: uniqueTaskQueue('custom-tools'), llmUrl: llm.url, extra: { CUSTOM_TOOLS_MARKS: marks } });
});

afterAll(async () => {
  for (const worker of workers) await worker.kill('SIGKILL');
  await client?.connection.close();
  await llm?.close();
});

describe('custom tools on real worker processes', () => {
  it('answers a side-effecting call whose worker was SIGKILLed mid-call TOOL_OUTCOME_UNKNOWN, never runs it twice, and goes on on the other worker', async () => {
    const model = `custom-kill-${Date.now()}`;
    llm.script(
      model,
      { kind: 'tool_calls', calls: [{ id: 'charge_1', name: 'charge', input: { cents: 500 } }, { id: 'lookup_1', name: 'lookup', input: { q: 'after' } }] },
      { kind: 'tool_calls', calls: [{ id: 'lookup_2', name: 'lookup', input: { q: 'again' } }] },
      { kind: 'text', text: 'Found it.' },
    );
    await Promise.all([startWorker('custom-tools-1'), startWorker('custom-tools-2')]);
    const session = await startSession(client, { AGENT_TASK_QUEUE: String(env.AGENT_TASK_QUEUE) }, { model: `openai:${model}`, customTools: ['charge', 'lookup'] });
    const turn = sendAndWait(session, 'charge me');
    const runs = () => readFile(marks, 'utf8').then((text) => text.trim().split('\n'), () => []);
    await eventually('the charge to run', async () => ((await runs()).length > 0 ? true : undefined), 60_000);
    const [pid] = (await runs())[0]?.split(' ') ?? [];
    await workers.find((w) => String(w.pid) === pid)?.kill('SIGKILL');

    expect(await turn).toMatchObject({ status: 'failed', failure: { type: 'heartbeat_timeout' } });
    expect(await runs()).toEqual([`${pid} charge_1 ${positionIdempotencyKey(session.workflowId, { turn: 1, step: 1, callId: 'charge_1' })}`]);
    const results = (await readLog(session)).flatMap((e) => (e.type === 'tool/result' ? [[e.callId, e.code]] : []));
    expect(results).toEqual([
      ['charge_1', 'TOOL_OUTCOME_UNKNOWN'],
      ['lookup_1', 'TOOL_NOT_STARTED'],
    ]);

    expect(await sendAndWait(session, 'look it up')).toMatchObject({ status: 'completed' });
    expect((await readLog(session)).some((e) => e.type === 'tool/result' && e.callId === 'lookup_2' && e.code === 'ok' && e.content === 'found again')).toBe(true);
  });
});
