import { ApplicationFailure } from '@temporalio/activity';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { MCP_ERROR_TYPES } from '../../contracts/errors';
import { mcpToolName, type ListMcpToolsRequest, type McpTool, type McpToolList } from '../../contracts/tools/mcp-tools';
import type { McpServerConfig } from '../../config/mcp-config';
import type { Connection, McpConnections } from './connections';
import { describeServer, mcpFailure } from './mcp-failure';

/**
 * What one server may list. A server is outside the worker's trust: without these, one
 * that names a next page forever keeps the listing going, and one with huge descriptions
 * or schemas puts them into history and into every LLM request of the session.
 */
export const MCP_LIST_LIMITS = {
  pages: 100,
  toolsPerServer: 256,
  descriptionChars: 4096,
  /** One tool's input schema, as JSON. */
  schemaChars: 64 * 1024,
  /** How deep one tool's input schema nests: a list with a schema 1000 levels deep held up every workflow task of its session. */
  schemaDepth: 64,
  /** The whole list a session records, as JSON: well inside Temporal's 2 MiB payload limit. */
  listChars: 1024 * 1024,
} as const;

/**
 * Lists the tools of the session's servers, in the order the servers are given and each
 * server lists them. A name two tools would share (after the 64-character cut) fails the
 * listing: one tool silently replacing another would dispatch calls to the wrong server.
 */
export async function listMcpTools(connections: McpConnections, request: ListMcpToolsRequest, signal: AbortSignal): Promise<McpToolList> {
  const tools: McpTool[] = [];
  const owners = new Map<string, string>();
  for (const name of request.servers) {
    const server = connections.server(name);
    const connection = await connections.client(name);
    for (const tool of (await serverTools(connection, name, server, signal)).values()) {
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
        description: cutDescription(tool.description ?? tool.title ?? ''),
        inputSchema,
        lane: laneOf(server, tool),
        timeoutMs: server.timeoutMs,
      });
    }
  }
  const size = JSON.stringify(tools).length;
  if (size > MCP_LIST_LIMITS.listChars) {
    throw refused(`the tools of ${request.servers.map((s) => `"${s}"`).join(', ')} come to ${size} characters of JSON, more than the ${MCP_LIST_LIMITS.listChars} a session records; leave a server out with --mcp`);
  }
  return { servers: request.servers, tools };
}

/** The config's lists win; then the server's own hint; without one a tool may change things. */
export function laneOf(server: McpServerConfig, tool: Tool): McpTool['lane'] {
  if (server.readOnly.includes(tool.name)) return 'read_only';
  if (server.sideEffecting.includes(tool.name)) return 'side_effecting';
  return tool.annotations?.readOnlyHint === true ? 'read_only' : 'side_effecting';
}

/**
 * The server's tools by name, listed within the limits above, and kept on the connection:
 * a call checks its arguments and its lane against what this worker listed, never against
 * what a session's input says the server listed.
 */
export async function serverTools(connection: Connection, name: string, server: McpServerConfig, signal: AbortSignal): Promise<ReadonlyMap<string, Tool>> {
  const who = describeServer(name, server);
  const tools = new Map<string, Tool>();
  let cursor: string | undefined;
  let pages = 0;
  try {
    do {
      if (++pages > MCP_LIST_LIMITS.pages) throw refused(`${who} lists more than ${MCP_LIST_LIMITS.pages} pages of tools`);
      const page = await connection.client.listTools(cursor === undefined ? {} : { cursor }, { timeout: server.timeoutMs, signal });
      for (const tool of page.tools) tools.set(tool.name, tool);
      if (tools.size > MCP_LIST_LIMITS.toolsPerServer) throw refused(`${who} lists ${tools.size} tools, more than the ${MCP_LIST_LIMITS.toolsPerServer} a server may offer`);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
  } catch (error) {
    if (error instanceof ApplicationFailure || signal.aborted) throw error;
    throw mcpFailure(name, server, error, connection.clue(), 'list');
  }
  for (const tool of tools.values()) {
    const size = JSON.stringify(tool.inputSchema).length;
    if (size > MCP_LIST_LIMITS.schemaChars) throw refused(`${who} lists "${tool.name}" with an input schema of ${size} characters of JSON, more than the ${MCP_LIST_LIMITS.schemaChars} a tool may have`);
    if (nestsDeeper(tool.inputSchema, MCP_LIST_LIMITS.schemaDepth)) throw refused(`${who} lists "${tool.name}" with an input schema nested more than ${MCP_LIST_LIMITS.schemaDepth} levels deep`);
  }
  connection.tools = tools;
  return tools;
}

/** Whether `value` nests objects or arrays more than `limit` levels, walked without recursion. */
function nestsDeeper(value: unknown, limit: number): boolean {
  const open: [unknown, number][] = [[value, 0]];
  for (let next = open.pop(); next !== undefined; next = open.pop()) {
    const [node, depth] = next;
    if (typeof node !== 'object' || node === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(node)) open.push([child, depth + 1]);
  }
  return false;
}

function cutDescription(text: string): string {
  const { descriptionChars } = MCP_LIST_LIMITS;
  if (text.length <= descriptionChars) return text;
  const note = `… [description cut at ${descriptionChars} characters of ${text.length}]`;
  return `${text.slice(0, descriptionChars - note.length)}${note}`;
}

/** Listing again cannot make a server list less: never retried. */
function refused(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: MCP_ERROR_TYPES.unavailable, message, nonRetryable: true });
}
