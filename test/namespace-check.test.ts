/**
 * The worker checks its namespace before it polls: on a plain dev server (no custom search
 * attributes, as `temporal server start-dev` comes) it stops with the command that fixes
 * it, or registers the attributes when told to; an unknown namespace is one line too.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { findFreePort, startDevServer, type DevServer } from '../harness/dev-server';
import { temporalCliPath } from '../harness/temporal-binaries';
import { agentWorkerEnv } from '../harness/worker-env';
import { spawnWorker, type WorkerProcess } from '../harness/worker-process';
import { runEntry, type CliResult } from './support/cli';
import { sendAndWait, startSession, startSessionWithMessage } from '../client/sessions';
import { AgentStatus } from '../contracts/search-attributes';
import { workerLogFile } from './support/worker-processes';

const NAMESPACES = ['default', 'by-variable', 'by-flag', 'wrong-type', 'client-first'] as const;

let server: DevServer;
let llm: ScriptedLlm;
let connection: Connection;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  server = await startDevServer({
    ip: '127.0.0.1',
    port: await findFreePort(),
    uiPort: false,
    // A plain server: none of the agent's search attributes.
    searchAttributes: [],
    extraArgs: NAMESPACES.slice(1).flatMap((ns) => ['--namespace', ns]),
    output: 'ignore',
  });
  llm = await startScriptedLlm();
  connection = await Connection.connect({ address: server.address });
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill('SIGKILL')));
  await connection?.close();
  await llm?.close();
  await server?.stop();
});

function workerEnv(namespace: string, extra: Record<string, string> = {}) {
  const taskQueue = `namespace-check-${randomUUID()}`;
  return { taskQueue, env: agentWorkerEnv({ address: server.address, namespace, taskQueue, llmUrl: llm.url, extra }) };
}

async function registered(namespace: string): Promise<Record<string, unknown>> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  return { ...customAttributes };
}

async function startPolling(name: string, namespace: string, extra: Record<string, string>, args: string[] = []) {
  const { taskQueue, env } = workerEnv(namespace, extra);
  const worker = await spawnWorker({ env, logFile: workerLogFile(name), args });
  workers.push(worker);
  await worker.ready;
  return { worker, taskQueue };
}

async function runSession(namespace: string, taskQueue: string): Promise<CliResult> {
  const model = `ns-${randomUUID()}`;
  llm.script(model, { kind: 'text', text: 'indexed' });
  return runEntry('client/main.ts', ['run', '--prompt', 'hi', '--model', `anthropic:${model}`, '--json'], {
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: namespace,
    AGENT_TASK_QUEUE: taskQueue,
  });
}

describe('the namespace check at worker start', () => {
  it('stops before polling with one line naming the exact temporal command, and that command fixes the namespace', async () => {
    const { env } = workerEnv('default');
    const result = await runEntry('worker/main.ts', [], env as Record<string, string>);
    expect(result.code).toBe(1);
    const command =
      'temporal operator search-attribute create --namespace default --name AgentStatus --type Keyword --name AgentStepCount --type Int --name AgentModel --type Keyword --name AgentCostUsd --type Double';
    expect(result.stderr.trim()).toBe(
      `worker: namespace "default" lacks the search attributes AgentStatus, AgentStepCount, AgentModel, AgentCostUsd; register them with \`${command}\`, or start the worker with --register-search-attributes (AGENT_REGISTER_SEARCH_ATTRIBUTES=true)`,
    );
    expect(result.stdout).not.toContain('polling');
    expect(await registered('default')).toEqual({});

    // The printed command, run as printed (the CLI finds the server through TEMPORAL_ADDRESS, as the worker did).
    const cli = await temporalCliPath();
    const [, ...args] = command.split(' ');
    await promisify(execFile)(cli, args, { env: { ...process.env, TEMPORAL_ADDRESS: server.address }, cwd: path.dirname(cli) });
    expect(Object.keys(await registered('default')).sort()).toEqual(['AgentCostUsd', 'AgentModel', 'AgentStatus', 'AgentStepCount']);
    const { taskQueue } = await startPolling('namespace-check-after-command', 'default', {});
    expect(JSON.parse((await runSession('default', taskQueue)).stdout)).toMatchObject({ status: 'completed' });
  });

  it('registers the missing attributes with AGENT_REGISTER_SEARCH_ATTRIBUTES=true, and sessions then run', async () => {
    const { worker, taskQueue } = await startPolling('namespace-check-variable', 'by-variable', { AGENT_REGISTER_SEARCH_ATTRIBUTES: 'true' });
    expect(worker.output()).toContain('registered the search attributes AgentStatus, AgentStepCount, AgentModel, AgentCostUsd in namespace by-variable');
    const result = await runSession('by-variable', taskQueue);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'completed' });
  });

  it('registers them with --register-search-attributes, and says nothing when they are already there', async () => {
    const first = await startPolling('namespace-check-flag', 'by-flag', {}, ['--register-search-attributes']);
    expect(first.worker.output()).toContain('registered the search attributes');
    const second = await startPolling('namespace-check-flag-again', 'by-flag', {}, ['--register-search-attributes']);
    expect(second.worker.output()).not.toContain('registered');
  });

  it('stops in one line when an attribute has another type, since a type cannot be changed', async () => {
    await connection.operatorService.addSearchAttributes({ namespace: 'wrong-type', searchAttributes: { AgentModel: encodeSearchAttributeIndexedValueType('TEXT') ?? 0 } });
    const { env } = workerEnv('wrong-type', { AGENT_REGISTER_SEARCH_ATTRIBUTES: 'true' });
    const result = await runEntry('worker/main.ts', [], env as Record<string, string>, 30_000);
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^worker: search attribute AgentModel in namespace "wrong-type" is Text, the agent needs Keyword; .*temporal operator search-attribute remove --namespace wrong-type --name AgentModel/);
  });

  it('starts sessions on a namespace no worker has registered the attributes in yet, without them, and they run once a worker has', async () => {
    // The client's start request carries the attributes (contracts/session-revision.ts); this namespace has no mapping for them yet.
    const client = new Client({ connection, namespace: 'client-first' });
    const { taskQueue, env } = workerEnv('client-first', { AGENT_REGISTER_SEARCH_ATTRIBUTES: 'true' });
    const model = `ns-${randomUUID()}`;
    llm.script(model, { kind: 'text', text: 'started plainly' }, { kind: 'text', text: 'started with its message' });
    const plain = await startSession(client, { AGENT_TASK_QUEUE: taskQueue }, { model: `anthropic:${model}` });
    // Accepted only once a worker runs the session's first task: started before the worker, awaited after.
    const withMessage = startSessionWithMessage(client, { AGENT_TASK_QUEUE: taskQueue }, { model: `anthropic:${model}` }, 'hello');
    const worker = await spawnWorker({ env, logFile: workerLogFile('namespace-check-client-first') });
    workers.push(worker);
    await worker.ready;
    expect((await sendAndWait(plain, 'hi')).status).toBe('completed');
    const second = await withMessage;
    expect((await second.turn()).status).toBe('completed');
    for (const handle of [plain, second.handle]) {
      const [started] = (await handle.fetchHistory()).events ?? [];
      expect(Object.keys(started?.workflowExecutionStartedEventAttributes?.searchAttributes?.indexedFields ?? {})).toEqual([]);
      // Upserted by the session itself, once the worker had registered them.
      expect((await handle.describe()).typedSearchAttributes.get(AgentStatus)).toBe('idle');
    }
  });

  it('says in one line that a namespace does not exist', async () => {
    const { env } = workerEnv('no-such-namespace');
    const result = await runEntry('worker/main.ts', [], env as Record<string, string>);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(`worker: namespace "no-such-namespace" does not exist on ${server.address} (TEMPORAL_NAMESPACE)`);
  });
});
