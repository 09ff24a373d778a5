import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection, WorkflowUpdateStage } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLog, sendAndWait, startSession, turnOutcomeOf, type TurnResult } from '../client/sessions';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { agentWorkerEnv } from '../harness/worker-env';
import type { WorkerProcess } from '../harness/worker-process';
import { sendUpdate } from '../contracts/api';
import { eventually } from './support/eventually';
import { filesystemServer, startHttpMcpServer, writeMcpConfig, type TestHttpMcpServer } from './support/mcp/servers';
import { startWorkerProcess } from './support/worker-processes';
import { devServerAddress, devServerNamespace, uniqueTaskQueue } from './temporal-env';

let llm: ScriptedLlm;
let server: TestHttpMcpServer;
let client: Client;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  [llm, server] = await Promise.all([startScriptedLlm(), startHttpMcpServer()]);
  client = new Client({ connection: await Connection.connect({ address: devServerAddress() }), namespace: devServerNamespace() });
}, 60_000);
afterAll(async () => {
  for (const worker of workers) await worker.kill('SIGKILL');
  await client?.connection.close();
  await server?.close();
  await llm?.close();
});

describe('a worker killed during a side-effecting MCP call', () => {
  it('answers that call TOOL_OUTCOME_UNKNOWN and the calls after it TOOL_NOT_STARTED, never runs the write again, and the session goes on', async () => {
    const taskQueue = uniqueTaskQueue('mcp-crash');
    const env = agentWorkerEnv({
      address: devServerAddress(),
      namespace: devServerNamespace(),
      taskQueue,
      llmUrl: llm.url,
      extra: { AGENT_MCP_CONFIG: await writeMcpConfig({ remote: { url: server.url } }) },
    });
    workers.push(await startWorkerProcess('mcp-crash-before-kill', env));
    const model = `mcp-crash-${Date.now()}`;
    llm.script(
      model,
      {
        kind: 'tool_calls',
        calls: [
          { id: 'toolu_write', name: 'mcp__remote__slow_write', input: { text: 'crash-once' } },
          { id: 'toolu_after', name: 'mcp__remote__first', input: {} },
        ],
      },
      { kind: 'text', text: 'still here' },
    );
    const session = await startSession(client, { AGENT_TASK_QUEUE: taskQueue }, { model: `anthropic:${model}`, mcp: ['remote'] });
    const send = await session.startUpdate(sendUpdate, { args: [{ text: 'write it' }], waitForStage: WorkflowUpdateStage.ACCEPTED });
    await eventually('the write to reach the server', async () => ((await server.events()).includes('call slow_write crash-once') ? true : undefined), 60_000);

    const killedAt = Date.now();
    await workers[0]?.kill('SIGKILL');
    workers.push(await startWorkerProcess('mcp-crash-after-kill', env));
    const outcome: TurnResult = await send.result().then(
      (o) => ({ status: o.status, turn: o.turn }),
      (error: unknown) => turnOutcomeOf(error) ?? Promise.reject(error),
    );
    expect(outcome).toMatchObject({ status: 'failed', failure: { type: 'heartbeat_timeout' } });
    // Noticed by the call's 10 s heartbeat timeout (plus the new worker's start), not its 70 s start-to-close.
    expect(Date.now() - killedAt).toBeLessThan(30_000);

    const results = (await readLog(session)).flatMap((e) => (e.type === 'tool/result' ? [[e.callId, e.code]] : []));
    expect(results).toEqual([
      ['toolu_write', 'TOOL_OUTCOME_UNKNOWN'],
      ['toolu_after', 'TOOL_NOT_STARTED'],
    ]);
    // The write ran once: no attempt after the crash.
    await server.releaseWrites();
    expect((await server.events()).filter((e) => e === 'call slow_write crash-once')).toHaveLength(1);
    expect((await server.events()).filter((e) => e === 'call first')).toHaveLength(0);

    expect(await sendAndWait(session, 'are you there?')).toMatchObject({ status: 'completed' });
  }, 120_000);

  it('is the same with the real filesystem server: its write_file in flight is TOOL_OUTCOME_UNKNOWN, the next write TOOL_NOT_STARTED, and neither runs after the crash', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'mcp-crash-fs-'));
    const taskQueue = uniqueTaskQueue('mcp-crash-fs');
    const env = agentWorkerEnv({
      address: devServerAddress(),
      namespace: devServerNamespace(),
      taskQueue,
      llmUrl: llm.url,
      extra: { AGENT_MCP_CONFIG: await writeMcpConfig({ fs: filesystemServer(dir) }) },
    });
    workers.push(await startWorkerProcess('mcp-crash-fs-before-kill', env));
    const model = `mcp-crash-fs-${Date.now()}`;
    const [first, second] = [path.join(dir, 'first.txt'), path.join(dir, 'second.txt')];
    llm.script(
      model,
      {
        kind: 'tool_calls',
        hold: true,
        calls: [
          { id: 'toolu_fs_first', name: 'mcp__fs__write_file', input: { path: first, content: 'one' } },
          { id: 'toolu_fs_second', name: 'mcp__fs__write_file', input: { path: second, content: 'two' } },
        ],
      },
      { kind: 'text', text: 'still here' },
    );
    const session = await startSession(client, { AGENT_TASK_QUEUE: taskQueue }, { model: `anthropic:${model}`, mcp: ['fs'] });
    const send = await session.startUpdate(sendUpdate, { args: [{ text: 'write both' }], waitForStage: WorkflowUpdateStage.ACCEPTED });
    // The tools are listed before the first LLM call, so the server runs by now; stopped
    // (SIGSTOP), it takes the write request and never answers: the write is in flight.
    await llm.waitForRequests(1, { model });
    const serverPid = await filesystemServerPid(dir);
    process.kill(serverPid, 'SIGSTOP');
    try {
      llm.release(model);
      await eventually('the first write to be dispatched', async () => ((await readLog(session)).some((e) => e.type === 'tool/call' && e.callId === 'toolu_fs_first') ? true : undefined), 60_000);
      await workers[workers.length - 1]?.kill('SIGKILL');
      workers.push(await startWorkerProcess('mcp-crash-fs-after-kill', env));
      const outcome = await send.result().then(
        (o) => ({ status: o.status }),
        (error: unknown) => turnOutcomeOf(error) ?? Promise.reject(error),
      );
      expect(outcome).toMatchObject({ status: 'failed' });
      const results = (await readLog(session)).flatMap((e) => (e.type === 'tool/result' ? [[e.callId, e.code]] : []));
      expect(results).toEqual([
        ['toolu_fs_first', 'TOOL_OUTCOME_UNKNOWN'],
        ['toolu_fs_second', 'TOOL_NOT_STARTED'],
      ]);
      expect(await sendAndWait(session, 'are you there?')).toMatchObject({ status: 'completed' });
      // The new worker's own filesystem server never got either write.
      expect([existsSync(first), existsSync(second)]).toEqual([false, false]);
    } finally {
      process.kill(serverPid, 'SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

/** The filesystem server the worker started for `dir` (its only argument names it). */
async function filesystemServerPid(dir: string): Promise<number> {
  const { stdout } = await promisify(execFile)('pgrep', ['-f', `server-filesystem/dist/index.js ${dir}`]);
  const pids = stdout.trim().split('\n').map(Number);
  expect(pids).toHaveLength(1);
  return pids[0]!;
}
