/**
 * The Temporal server itself goes away in the middle of a session and comes back on the
 * same SQLite file: the session must carry on where it was, with nothing in its log lost.
 * A private dev server, because stopping the shared one would break every other test file.
 */
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { Client, Connection, WorkflowUpdateStage } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLog, sendAndWait, startSession, type SessionHandle } from '../client/sessions';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { findFreePort, startDevServer, type DevServer } from '../harness/dev-server';
import { PROJECT_ROOT } from '../harness/temporal-binaries';
import { agentWorkerEnv } from '../harness/worker-env';
import type { WorkerProcess } from '../harness/worker-process';
import { awaitTurnUpdate, endUpdate, sendUpdate } from '../contracts/api';
import type { SessionEvent } from '../contracts/session-log';
import { startWorkerProcess } from './support/worker-processes';

const DIR = path.join(PROJECT_ROOT, '.data', `server-restart-${randomUUID()}`);
const DB_FILE = path.join(DIR, 'temporal.sqlite');

let port: number;
let server: DevServer | undefined;
let llm: ScriptedLlm;
let worker: WorkerProcess | undefined;
const clients: Client[] = [];

const startServer = () =>
  startDevServer({ ip: '127.0.0.1', port, uiPort: false, dbFile: DB_FILE, output: { file: path.join(PROJECT_ROOT, 'test-results', 'server-restart-dev-server.log') } });

async function connect(): Promise<Client> {
  const client = new Client({ connection: await Connection.connect({ address: `127.0.0.1:${port}` }) });
  clients.push(client);
  return client;
}

beforeAll(async () => {
  port = await findFreePort();
  server = await startServer();
  llm = await startScriptedLlm();
});

afterAll(async () => {
  await worker?.kill('SIGKILL');
  for (const client of clients) await client.connection.close().catch(() => undefined);
  await server?.stop();
  await llm?.close();
  await rm(DIR, { recursive: true, force: true });
});

const withoutTimes = (events: SessionEvent[]) => events.map(({ at: _at, ...rest }) => rest);

describe('a restart of the Temporal server (persistent SQLite) in the middle of a session', () => {
  it('continues the session: the turn in flight completes, the next message is accepted, and every event recorded before the stop is still there, unchanged', async () => {
    const taskQueue = `restart-${randomUUID()}`;
    const running = await startWorkerProcess('server-restart', agentWorkerEnv({ address: `127.0.0.1:${port}`, taskQueue, llmUrl: llm.url }));
    worker = running;
    // Settled when the process exits; read at the end, so an exit at any point in between counts.
    let exitCode: number | null | 'running' = 'running';
    void running.exited.then((code) => (exitCode = code));
    // An `echo` model answers by echoing once its script is used up: turn 3, and a retry of
    // turn 2 should the server have timed the held call out while it was down.
    const model = `echo-restart-${randomUUID().slice(0, 8)}`;
    llm.script(
      model,
      { kind: 'tool_calls', calls: [{ name: 'calculator', input: { expression: '6*7' } }] },
      { kind: 'text', text: 'It is 42.' },
      // Turn 2: held in flight while the server is down.
      { kind: 'text', text: 'Still here after the restart.', hold: true, holdTimeoutMs: 120_000 },
    );

    const before = await connect();
    const session: SessionHandle = await startSession(before, { AGENT_TASK_QUEUE: taskQueue }, { model: `anthropic:${model}` });
    expect(await sendAndWait(session, 'what is 6*7?')).toEqual({ status: 'completed', turn: 1, reason: 'answered' });
    await session.startUpdate(sendUpdate, { args: [{ text: 'are you still there?' }], waitForStage: WorkflowUpdateStage.ACCEPTED });
    await llm.waitForRequests(3, { model }, 30_000);
    const logBeforeStop = await readLog(session);
    expect(logBeforeStop.at(-1)).toMatchObject({ type: 'step/start', turn: 2 });

    await server?.stop();
    server = undefined;
    server = await startServer();
    expect(llm.release(model)).toBe(1);

    const after = await connect();
    const resumed = after.workflow.getHandle(session.workflowId) as SessionHandle;
    const turn2 = await resumed.executeUpdate(awaitTurnUpdate, { args: [{ turn: 2 }] });
    expect(turn2).toMatchObject({ status: 'completed', turn: 2 });
    expect(await sendAndWait(resumed, 'and now?')).toEqual({ status: 'completed', turn: 3, reason: 'answered' });

    const log = await readLog(resumed);
    expect(withoutTimes(log.slice(0, logBeforeStop.length))).toEqual(withoutTimes(logBeforeStop));
    expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i));
    const assistants = log.flatMap((e) => (e.type === 'assistant' ? [[e.turn, e.step, e.message.text]] : []));
    expect(assistants).toEqual([
      [1, 1, ''],
      [1, 2, 'It is 42.'],
      [2, 1, expect.stringMatching(/^(Still here after the restart\.|You said: are you still there\?)$/)],
      [3, 1, 'You said: and now?'],
    ]);
    expect(log.filter((e) => e.type === 'turn/end').map((e) => e.type === 'turn/end' && e.status)).toEqual(['completed', 'completed', 'completed']);

    // Turn 2's call is either the one held across the outage or, had the server timed it out meanwhile, one retry of it.
    const requests = llm.requests({ model }).length;
    expect([4, 5]).toContain(requests);
    // The same worker process rode out the outage: it reconnected on its own.
    expect(exitCode).toBe('running');
    expect(() => process.kill(running.pid, 0)).not.toThrow();

    await resumed.executeUpdate(endUpdate);
    await expect(resumed.result()).resolves.toMatchObject({ turns: 3, endedBy: 'request' });
    // Above the held reply's 120 s and the 30 s waits around the restart.
  }, 240_000);
});
