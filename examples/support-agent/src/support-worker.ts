import { fileURLToPath } from 'node:url';
import { Worker, type NativeConnection } from '@temporalio/worker';
import { AgentPlugin, type AgentPluginOptions } from 'durable-agent-worker/worker';
import { support } from './agent.js';

export interface SupportWorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue: string;
  providers: AgentPluginOptions['providers'];
}

/** The shop's worker: its own workflow beside the support agent's sessions and tools, which the plugin adds, on one task queue. */
export function createSupportWorker({ connection, namespace, taskQueue, providers }: SupportWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection,
    namespace,
    taskQueue,
    workflowsPath: fileURLToPath(new URL('./workflows.js', import.meta.url)),
    plugins: [new AgentPlugin({ providers, agents: [support] })],
  });
}
