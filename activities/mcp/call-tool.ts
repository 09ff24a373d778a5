import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { mcpToolName, type CallMcpToolRequest } from '../../contracts/tools/mcp-tools';
import type { ToolOutcome } from '../../contracts/tools/tool-outcome';
import { checkMcpArguments } from './check-arguments';
import type { McpConnections } from './connections';
import { laneOf, serverTools } from './list-tools';
import { isServerAnswer, mcpFailure } from './mcp-failure';
import { outcomeOf } from './outcome';

/**
 * One `tools/call`. First the worker's own word on the tool: its lane and its input schema
 * as this worker listed them (listing once per connection if it has not), so a session's
 * input cannot run a side-effecting tool in the read-only lane, and arguments the schema
 * refuses never reach the server. The activity heartbeats while the server works, so a
 * cancelled turn reaches it within seconds; the SDK then sends the server
 * `notifications/cancelled`. The server's configured `timeoutMs` ends the request the same
 * way. A server's error answer (a tool it no longer has, arguments it refuses) is a result
 * the model reads; a connection that breaks or a server that stays silent is a failure of
 * the call.
 */
export async function callMcpTool(connections: McpConnections, request: CallMcpToolRequest, heartbeatMs: number): Promise<ToolOutcome> {
  const ctx = Context.current();
  const server = connections.server(request.server);
  const offered = mcpToolName(request.server, request.tool);
  const ticker = setInterval(() => ctx.heartbeat(), heartbeatMs);
  let clue = () => '';
  try {
    const connection = await connections.client(request.server);
    clue = connection.clue;
    let listed = connection.tools?.get(request.tool);
    // Listed before this worker started or before the server added it: ask the server once.
    if (listed === undefined) listed = (await serverTools(connection, request.server, server, ctx.cancellationSignal)).get(request.tool);
    if (listed === undefined) {
      return { code: 'error', content: `Tool call rejected: MCP server "${request.server}" no longer lists "${request.tool}", so "${offered}" was not called.` };
    }
    if (request.lane === 'read_only' && laneOf(server, listed) === 'side_effecting') {
      return {
        code: 'error',
        content:
          `The call was not run: this worker's configuration of MCP server "${request.server}" makes "${request.tool}" side-effecting, ` +
          "but the session's tool list has it read-only. Tell the user to list the session's tools again (refresh-tools).",
      };
    }
    const check = checkMcpArguments(request.server, offered, listed.inputSchema, request.arguments);
    if (!check.ok) return { code: 'error', content: check.content };
    const result = await connection.client.callTool({ name: request.tool, arguments: request.arguments }, undefined, {
      signal: ctx.cancellationSignal,
      timeout: server.timeoutMs,
      onprogress: () => ctx.heartbeat(),
    });
    return outcomeOf(result as CallToolResult);
  } catch (error) {
    if (ctx.cancellationSignal.aborted) throw new CancelledFailure('the MCP call was cancelled');
    // Already typed (the connection could not be opened, the server lists past its limits).
    if (error instanceof ApplicationFailure) throw error;
    if (isServerAnswer(error)) return { code: 'error', content: `MCP server "${request.server}" refused the call: ${error.message}` };
    throw mcpFailure(request.server, server, error, clue(), 'call');
  } finally {
    clearInterval(ticker);
  }
}
