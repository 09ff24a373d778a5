import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLog, sendAndWait, startSession } from '../client/sessions';
import { spendOf } from '../contracts/spend';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { agentWorkerEnv } from '../harness/worker-env';
import { spawnWorker, type WorkerProcess } from '../harness/worker-process';
import { startHttpMcpServer, type TestHttpMcpServer } from './support/mcp/servers';
import { useTempDir } from './support/temp-dir';
import { workerLogFile } from './support/worker-processes';
import { devServerAddress, devServerNamespace, uniqueTaskQueue } from './temporal-env';

const dir = useTempDir('worker-config-files-');
let llm: ScriptedLlm;
let server: TestHttpMcpServer;
let client: Client;
let worker: WorkerProcess | undefined;

beforeAll(async () => {
  [llm, server] = await Promise.all([startScriptedLlm(), startHttpMcpServer()]);
  client = new Client({ connection: await Connection.connect({ address: devServerAddress() }), namespace: devServerNamespace() });
}, 60_000);
afterAll(async () => {
  await worker?.kill('SIGKILL');
  await client?.connection.close();
  await server?.close();
  await llm?.close();
});

describe('the worker process and the files its environment names', () => {
  it("reads AGENT_MCP_CONFIG and AGENT_PRICES_FILE once each: pipes that give their content once (as a shell's <(…) does) are enough, and its sessions use what it read", async () => {
    const mcpPipe = path.join(dir(), 'mcp.json');
    const pricesPipe = path.join(dir(), 'prices.json');
    await promisify(execFile)('mkfifo', [mcpPipe, pricesPipe]);
    const taskQueue = uniqueTaskQueue('config-files');
    const model = `piped-prices-${Date.now()}`;
    const logFile = workerLogFile('worker-config-files');
    const env = agentWorkerEnv({ address: devServerAddress(), namespace: devServerNamespace(), taskQueue, llmUrl: llm.url, extra: { AGENT_MCP_CONFIG: mcpPipe, AGENT_PRICES_FILE: pricesPipe } });
    worker = await spawnWorker({ env, logFile });
    // Each write ends once the worker has opened its pipe and taken the content. Nothing
    // writes again: a second read of either would wait for ever, and the worker never poll.
    const written = Promise.all([
      writeFile(mcpPipe, JSON.stringify({ mcpServers: { remote: { url: server.url } } })),
      writeFile(pricesPipe, JSON.stringify({ models: { [`anthropic:${model}`]: { input: 1, output: 1 } } })),
    ]);
    await Promise.race([written, worker.ready]);
    await worker.ready;

    // $1 per million tokens, from the piped table: two calls of 100k input tokens are $0.20.
    const usage = { inputTokens: 100_000, outputTokens: 0 };
    llm.script(model, { kind: 'tool_calls', calls: [{ id: 'toolu_first', name: 'mcp__remote__first', input: {} }], usage }, { kind: 'text', text: 'done', usage });
    const session = await startSession(client, { AGENT_TASK_QUEUE: taskQueue }, { model: `anthropic:${model}`, mcp: ['remote'] });
    expect(await sendAndWait(session, 'call the first tool')).toMatchObject({ status: 'completed' });
    // The server the piped file named answered the call.
    expect(await server.events()).toContain('call first');
    expect(spendOf(await readLog(session)).costUsd).toBeCloseTo(0.2, 10);
  }, 240_000);
});
