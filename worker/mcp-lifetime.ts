import type { Worker } from '@temporalio/worker';
import type { McpConnections } from '../activities/mcp';

/**
 * Stdio servers are child processes of the worker: they are stopped when the worker stops
 * running, also in a process that goes on (a test, the local agent), not only at its exit.
 */
export function stopMcpServersWithWorker(worker: Worker, connections: McpConnections): Worker {
  const run = worker.run.bind(worker);
  worker.run = () => run().finally(() => connections.close());
  return worker;
}
