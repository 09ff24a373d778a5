import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { CallMcpToolRequest } from '../../contracts/tools/mcp-tools';
import type { ToolOutcome } from '../../contracts/tools/tool-outcome';
import type { McpConnections } from './connections';
import { isServerAnswer, mcpFailure } from './mcp-failure';
import { outcomeOf } from './outcome';

/**
 * One `tools/call`. The activity heartbeats while the server works, so a cancelled turn
 * reaches it within seconds; the SDK then sends the server `notifications/cancelled`. The
 * server's `timeoutMs` ends the request the same way. A server's error answer (a tool it
 * no longer has, arguments it refuses) is a result the model reads; a connection that
 * breaks or a server that stays silent is a failure of the call.
 */
export async function callMcpTool(connections: McpConnections, request: CallMcpToolRequest, heartbeatMs: number): Promise<ToolOutcome> {
  const ctx = Context.current();
  const server = connections.server(request.server);
  const ticker = setInterval(() => ctx.heartbeat(), heartbeatMs);
  let clue = () => '';
  try {
    const connection = await connections.client(request.server);
    clue = connection.clue;
    const result = await connection.client.callTool({ name: request.tool, arguments: request.arguments }, undefined, {
      signal: ctx.cancellationSignal,
      timeout: request.timeoutMs,
      onprogress: () => ctx.heartbeat(),
    });
    return outcomeOf(result as CallToolResult);
  } catch (error) {
    if (ctx.cancellationSignal.aborted) throw new CancelledFailure('the MCP call was cancelled');
    // Already typed (the connection could not be opened).
    if (error instanceof ApplicationFailure) throw error;
    if (isServerAnswer(error)) return { code: 'error', content: `MCP server "${request.server}" refused the call: ${error.message}` };
    throw mcpFailure(request.server, server, error, clue(), 'call');
  } finally {
    clearInterval(ticker);
  }
}
