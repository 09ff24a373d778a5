import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { startLocalAgent } from '../../harness/local-agent';
import { startScriptedLlm, type ScriptedLlm } from '../../testing/scripted-llm/server';
import { PROJECT_ROOT } from '../../harness/temporal-binaries';
import { agentWorkerEnv } from '../../harness/worker-env';
import { spawnWorker, type WorkerProcess } from '../../harness/worker-process';

/**
 * The worker (and its scripted LLM) a soak runs against, restartable in the middle of it:
 * - `in-process`: a worker in this process, restarted by an orderly shutdown (activities in
 *   flight are cancelled and retried). Fast: what the CI soak uses.
 * - `process`: `npm run worker` as a child process, restarted by SIGKILL. Temporal notices
 *   the loss only when a heartbeat times out (10-20 s), so each restart costs that much.
 */
export type WorkerMode = 'in-process' | 'process';

export interface SoakRig {
  client: Client;
  llm: ScriptedLlm;
  taskQueue: string;
  restartWorker(): Promise<void>;
  close(): Promise<void>;
}

export interface SoakRigOptions {
  address: string;
  namespace: string;
  mode: WorkerMode;
  /** Worker settings: the HTTP allowlist, the idle timeout. */
  env: Record<string, string>;
}

export async function startSoakRig(options: SoakRigOptions): Promise<SoakRig> {
  const taskQueue = `soak-${randomUUID()}`;
  if (options.mode === 'in-process') {
    const agent = await startLocalAgent({ address: options.address, namespace: options.namespace, taskQueue, env: options.env });
    return {
      client: agent.client,
      llm: agent.llm,
      taskQueue,
      async restartWorker() {
        await agent.stopWorker();
        await agent.startWorker();
      },
      close: () => agent.close(),
    };
  }

  const llm = await startScriptedLlm();
  const env = agentWorkerEnv({ address: options.address, namespace: options.namespace, taskQueue, llmUrl: llm.url, extra: options.env });
  let generation = 0;
  const spawn = async (): Promise<WorkerProcess> => {
    const worker = await spawnWorker({ env, logFile: path.join(PROJECT_ROOT, 'test-results', 'soak', `worker-${++generation}.log`) });
    await worker.ready;
    return worker;
  };
  let worker = await spawn();
  const connection = await Connection.connect({ address: options.address });
  return {
    client: new Client({ connection, namespace: options.namespace }),
    llm,
    taskQueue,
    async restartWorker() {
      await worker.kill('SIGKILL');
      worker = await spawn();
    },
    async close() {
      await worker.kill('SIGKILL');
      await connection.close();
      await llm.close();
    },
  };
}
