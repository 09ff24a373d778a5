import type { Worker } from '@temporalio/worker';
import { McpConnections } from '../activities/mcp';
import { loadMcpConfig } from './mcp-config';
import type { WorkerEnv } from './config';

/** The worker's MCP connections, from AGENT_MCP_CONFIG; a bad file throws a ConfigError naming the server and the field. */
export function mcpConnectionsFor(env: Pick<WorkerEnv, 'AGENT_MCP_CONFIG'>): McpConnections {
  return new McpConnections(loadMcpConfig(env.AGENT_MCP_CONFIG, process.env));
}

/**
 * Stdio servers are child processes of the worker: they are stopped when the worker stops
 * running, also in a process that goes on (a test, the local agent), not only at its exit.
 */
export function stopMcpServersWithWorker(worker: Worker, connections: McpConnections): Worker {
  const run = worker.run.bind(worker);
  worker.run = () => run().finally(() => connections.close());
  return worker;
}
