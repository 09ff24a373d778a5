import { ApplicationFailure } from '@temporalio/activity';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { MCP_ERROR_TYPES } from '../../contracts/errors';
import { mcpToolName, type ListMcpToolsRequest, type McpTool, type McpToolList } from '../../contracts/tools/mcp-tools';
import type { McpServerConfig } from '../../worker/mcp-config';
import type { McpConnections } from './connections';
import { mcpFailure } from './mcp-failure';

/**
 * Lists the tools of the session's servers, in the order the servers are given and each
 * server lists them. A name two tools would share (after the 64-character cut) fails the
 * listing: one tool silently replacing another would dispatch calls to the wrong server.
 */
export async function listMcpTools(connections: McpConnections, request: ListMcpToolsRequest): Promise<McpToolList> {
  const tools: McpTool[] = [];
  const owners = new Map<string, string>();
  for (const name of request.servers) {
    const server = connections.server(name);
    for (const tool of await toolsOf(connections, name, server)) {
      const offered = mcpToolName(name, tool.name);
      const owner = owners.get(offered);
      if (owner !== undefined) {
        throw ApplicationFailure.create({
          type: MCP_ERROR_TYPES.nameClash,
          message: `two MCP tools would both be offered as "${offered}": ${owner} and ${name}/${tool.name}; rename a server in AGENT_MCP_CONFIG or leave one out with --mcp`,
          nonRetryable: true,
        });
      }
      owners.set(offered, `${name}/${tool.name}`);
      const { $schema: _ignored, ...inputSchema } = tool.inputSchema as Record<string, unknown>;
      tools.push({
        name: offered,
        server: name,
        tool: tool.name,
        description: tool.description ?? tool.title ?? '',
        inputSchema,
        lane: laneOf(server, tool),
        timeoutMs: server.timeoutMs,
      });
    }
  }
  return { servers: request.servers, tools };
}

/** The config's lists win; then the server's own hint; without one a tool may change things. */
function laneOf(server: McpServerConfig, tool: Tool): McpTool['lane'] {
  if (server.readOnly.includes(tool.name)) return 'read_only';
  if (server.sideEffecting.includes(tool.name)) return 'side_effecting';
  return tool.annotations?.readOnlyHint === true ? 'read_only' : 'side_effecting';
}

async function toolsOf(connections: McpConnections, name: string, server: McpServerConfig): Promise<Tool[]> {
  const connection = await connections.client(name);
  const tools: Tool[] = [];
  let cursor: string | undefined;
  try {
    do {
      const page = await connection.client.listTools(cursor === undefined ? {} : { cursor }, { timeout: server.timeoutMs });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
  } catch (error) {
    throw mcpFailure(name, server, error, connection.clue(), 'list');
  }
  return tools;
}
