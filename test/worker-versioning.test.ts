/**
 * Worker Versioning: two versions of one Worker Deployment on one task queue, deployed
 * with the commands of docs/operations.md, read from the text and run as written on the
 * test's own server. A session started on version v1 stays on v1 (Pinned) while v2 becomes
 * current, new sessions go to v2, and the session moves to v2 when it continues as new.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendAndWait, startSession, type SessionHandle } from '../client/sessions';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { findFreePort, startDevServer, type DevServer } from '../harness/dev-server';
import { temporalCliPath } from '../harness/temporal-binaries';
import { agentWorkerEnv } from '../harness/worker-env';
import type { WorkerProcess } from '../harness/worker-process';
import { blocksRunBy, DocLines } from './support/doc-blocks';
import { eventually } from './support/eventually';
import { startWorkerProcess } from './support/worker-processes';

const run = promisify(execFile);
const taskQueue = `versioning-${randomUUID()}`;

let server: DevServer;
let llm: ScriptedLlm;
let connection: Connection;
let client: Client;
let lines: DocLines;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  lines = new DocLines(await blocksRunBy('test/worker-versioning.test.ts'));
  server = await startDevServer({ ip: '127.0.0.1', port: await findFreePort(), uiPort: false, output: 'ignore' });
  llm = await startScriptedLlm();
  connection = await Connection.connect({ address: server.address });
  client = new Client({ connection });
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill('SIGKILL')));
  await connection?.close();
  await llm?.close();
  await server?.stop();
});

/** The text's `AGENT_DEPLOYMENT_NAME=… AGENT_BUILD_ID=… npm run worker`, as a worker process of the test's. */
async function startVersion(buildId: string): Promise<void> {
  const { env, argv } = lines.take(new RegExp(`AGENT_BUILD_ID=${buildId} npm run worker$`));
  expect(argv).toEqual(['npm', 'run', 'worker']);
  const worker = await startWorkerProcess(`versioning-${buildId}`, agentWorkerEnv({ address: server.address, taskQueue, llmUrl: llm.url, extra: env }));
  workers.push(worker);
  expect(worker.output()).toContain(`version ${env.AGENT_DEPLOYMENT_NAME}:${buildId}`);
}

/** A `temporal …` command of the text, as a function that runs it with the CLI the project installs, on the test's server. */
function temporal(pattern: RegExp): () => Promise<string> {
  const [program, ...args] = lines.take(pattern).argv;
  expect(program).toBe('temporal');
  return async () => (await run(await temporalCliPath(), args, { env: { ...process.env, TEMPORAL_ADDRESS: server.address } })).stdout;
}

/** The text's `temporal worker deployment set-current-version`; retried until the server has seen the version's poller. */
async function setCurrentVersion(buildId: string): Promise<void> {
  const setCurrent = temporal(new RegExp(`^temporal worker deployment set-current-version .*--build-id ${buildId}\\b`));
  await eventually(`version ${buildId} to become current`, async () => {
    await setCurrent();
    return true;
  });
}

interface RunVersion {
  runId: string;
  buildId: string | undefined;
  behavior: string;
}

/** Which version the session's current run is on, from the server's own record. */
async function versionOf(handle: SessionHandle): Promise<RunVersion> {
  const { raw, runId } = await client.workflow.getHandle(handle.workflowId).describe();
  const info = raw.workflowExecutionInfo?.versioningInfo;
  return { runId, buildId: info?.deploymentVersion?.buildId ?? undefined, behavior: String(info?.behavior ?? '') };
}

async function turn(handle: SessionHandle, model: string): Promise<void> {
  llm.script(model, { kind: 'text', text: 'noted' });
  await expect(sendAndWait(handle, 'one more thing')).resolves.toMatchObject({ status: 'completed' });
}

const PINNED = '1'; // temporal.api.enums.v1.VersioningBehavior.VERSIONING_BEHAVIOR_PINNED

describe('Worker Versioning', () => {
  it('keeps a session Pinned to version v1 until it continues as new, sends new sessions to v2, then moves the session to v2', async () => {
    await startVersion('v1');
    await setCurrentVersion('v1');
    const model = `versioning-${randomUUID()}`;
    const session = await startSession(client, { AGENT_TASK_QUEUE: taskQueue }, { model: `anthropic:${model}`, continueAsNewAfterEvents: 40 });
    await turn(session, model);
    const first = await versionOf(session);
    expect(first).toMatchObject({ buildId: 'v1', behavior: PINNED });

    await startVersion('v2');
    await setCurrentVersion('v2');
    const described = await temporal(/^temporal worker deployment describe /)();
    expect(described).toMatch(/v1/);
    expect(described).toMatch(/v2/);

    const fresh = await startSession(client, { AGENT_TASK_QUEUE: taskQueue }, { model: `anthropic:${model}` });
    await turn(fresh, model);
    expect(await versionOf(fresh)).toMatchObject({ buildId: 'v2', behavior: PINNED });

    // The operations guide's query for the sessions a version still runs, which says when v1 may be stopped.
    const stillOnV1 = temporal(/^temporal workflow list --query /);
    await eventually('the session to be listed as running on v1', async () => {
      const stdout = await stillOnV1();
      return stdout.includes(session.workflowId) && !stdout.includes(fresh.workflowId) ? true : undefined;
    });
    expect(lines.untaken()).toEqual([]);

    // Turns go on, on A, until the history is long enough to continue as new.
    let current = first;
    for (let turns = 0; current.runId === first.runId; turns++) {
      expect(turns, 'the session never continued as new').toBeLessThan(8);
      await turn(session, model);
      current = await versionOf(session);
      if (current.runId === first.runId) expect(current.buildId).toBe('v1');
    }
    // The new run starts on the current version and is pinned there.
    await turn(session, model);
    expect(await versionOf(session)).toMatchObject({ runId: current.runId, buildId: 'v2', behavior: PINNED });
  });
});
