import { Context } from '@temporalio/activity';
import type { McpActivities } from '../../contracts/tools/mcp-tools';
import type { McpConnections } from './connections';
import { callMcpTool } from './call-tool';
import { listMcpTools } from './list-tools';

export { McpConnections } from './connections';

export function createMcpActivities(connections: McpConnections, heartbeatMs = 2_000): McpActivities {
  return {
    listMcpTools: async (request) => {
      // Starting servers can take a while; the heartbeat lets a lost worker be noticed meanwhile.
      const ctx = Context.current();
      const ticker = setInterval(() => ctx.heartbeat(), heartbeatMs);
      try {
        return await listMcpTools(connections, request, ctx.cancellationSignal);
      } finally {
        clearInterval(ticker);
      }
    },
    callMcpTool: (request) => callMcpTool(connections, request, heartbeatMs),
  };
}
