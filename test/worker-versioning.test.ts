/**
 * Worker Versioning: two versions of one Worker Deployment on one task queue, deployed
 * with the `temporal worker deployment` commands docs/operations.md gives. A session started on
 * version A stays on A (Pinned) while B becomes current, new sessions go to B, and the
 * session moves to B when it continues as new.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendAndWait, startSession, type SessionHandle } from '../client/sessions';
import { startScriptedLlm, type ScriptedLlm } from '../harness/scripted-llm/server';
import { findFreePort, startDevServer, type DevServer } from '../harness/dev-server';
import { temporalCliPath } from '../harness/temporal-binaries';
import { agentWorkerEnv } from '../harness/worker-env';
import type { WorkerProcess } from '../harness/worker-process';
import { eventually } from './support/eventually';
import { startWorkerProcess } from './support/worker-processes';

const run = promisify(execFile);
const DEPLOYMENT = 'agent-workers';
const taskQueue = `versioning-${randomUUID()}`;

let server: DevServer;
let llm: ScriptedLlm;
let connection: Connection;
let client: Client;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
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

async function startVersion(buildId: string): Promise<void> {
  const env = agentWorkerEnv({ address: server.address, taskQueue, llmUrl: llm.url, extra: { AGENT_DEPLOYMENT_NAME: DEPLOYMENT, AGENT_BUILD_ID: buildId } });
  const worker = await startWorkerProcess(`versioning-${buildId}`, env);
  workers.push(worker);
  expect(worker.output()).toContain(`version ${DEPLOYMENT}:${buildId}`);
}

/** `temporal worker deployment set-current-version`, as docs/operations.md has it; retried until the server has seen the version's poller. */
async function setCurrentVersion(buildId: string): Promise<void> {
  const cli = await temporalCliPath();
  const args = ['worker', 'deployment', 'set-current-version', '--deployment-name', DEPLOYMENT, '--build-id', buildId, '--yes'];
  await eventually(`version ${buildId} to become current`, async () => {
    await run(cli, args, { env: { ...process.env, TEMPORAL_ADDRESS: server.address } });
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
  it('keeps a session Pinned to version A until it continues as new, sends new sessions to B, then moves the session to B', async () => {
    await startVersion('A');
    await setCurrentVersion('A');
    const model = `versioning-${randomUUID()}`;
    const session = await startSession(client, { AGENT_TASK_QUEUE: taskQueue }, { model: `anthropic:${model}`, continueAsNewAfterEvents: 40 });
    await turn(session, model);
    const first = await versionOf(session);
    expect(first).toMatchObject({ buildId: 'A', behavior: PINNED });

    await startVersion('B');
    await setCurrentVersion('B');

    const fresh = await startSession(client, { AGENT_TASK_QUEUE: taskQueue }, { model: `anthropic:${model}` });
    await turn(fresh, model);
    expect(await versionOf(fresh)).toMatchObject({ buildId: 'B', behavior: PINNED });

    // The operations guide's query for the sessions a version still runs, which says when A may be stopped.
    const stillOnA = ['workflow', 'list', '--query', `TemporalWorkerDeploymentVersion = "${DEPLOYMENT}:A" AND ExecutionStatus = "Running"`, '-o', 'json'];
    await eventually('the session to be listed as running on A', async () => {
      const { stdout } = await run(await temporalCliPath(), stillOnA, { env: { ...process.env, TEMPORAL_ADDRESS: server.address } });
      const listed = stdout.trim() === '' ? [] : (JSON.parse(stdout) as { execution?: { workflowId?: string } }[]);
      const ids = listed.map((w) => w.execution?.workflowId);
      return ids.includes(session.workflowId) && !ids.includes(fresh.workflowId) ? true : undefined;
    });

    // Turns go on, on A, until the history is long enough to continue as new.
    let current = first;
    for (let turns = 0; current.runId === first.runId; turns++) {
      expect(turns, 'the session never continued as new').toBeLessThan(8);
      await turn(session, model);
      current = await versionOf(session);
      if (current.runId === first.runId) expect(current.buildId).toBe('A');
    }
    // The new run starts on the current version and is pinned there.
    await turn(session, model);
    expect(await versionOf(session)).toMatchObject({ runId: current.runId, buildId: 'B', behavior: PINNED });
  });
});
