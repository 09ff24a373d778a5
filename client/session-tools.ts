import type { BuiltinToolName } from '../contracts/tools/registry';
import { waitsForApproval } from '../contracts/tools/approval-patterns';
import { latestMcpToolList, type McpToolList } from '../contracts/tools/mcp-tools';
import { readLatestRunLog, type SessionHandle } from './sessions';

/** One tool a session offers, with the lane its calls run in. */
export interface SessionTool {
  name: string;
  lane: string;
  /** Its calls wait for a human (`--approve-tools`): a side-effecting one by `*` or a pattern naming it, a read-only one only by a pattern naming it. */
  approval: boolean;
  /** For an MCP tool: its server and its own name there. */
  server?: string;
  tool?: string;
}

/** The built-in tools' lanes, as their `classify` decides them (http_request per method). */
const BUILTIN_LANES: Record<BuiltinToolName, 'read-only' | 'side-effecting' | 'read-only for GET and HEAD, side-effecting otherwise'> = {
  calculator: 'read-only',
  http_request: 'read-only for GET and HEAD, side-effecting otherwise',
  read_file: 'read-only',
  write_file: 'side-effecting',
};

const LANE_NAMES = { read_only: 'read-only', side_effecting: 'side-effecting' } as const;

/** The tools a session offers now: its built-in ones, then the MCP tools its log recorded last. */
export async function sessionTools(handle: Pick<SessionHandle, 'client' | 'workflowId' | 'query'>): Promise<SessionTool[]> {
  const { state, events } = await readLatestRunLog(handle);
  const approvals = state.settings.approvalRequired;
  const builtin = state.settings.tools.map((name) => ({
    name,
    lane: BUILTIN_LANES[name],
    // http_request's side-effecting methods are the ones `*` holds; a pattern naming it holds GETs too.
    approval: waitsForApproval(approvals, name, BUILTIN_LANES[name] === 'read-only' ? 'read_only' : 'side_effecting'),
  }));
  return [...builtin, ...mcpTools(latestMcpToolList(events), approvals)];
}

export function mcpTools(list: McpToolList | undefined, approvals: readonly string[]): SessionTool[] {
  return (list?.tools ?? []).map((t) => ({
    name: t.name,
    lane: LANE_NAMES[t.lane],
    approval: waitsForApproval(approvals, t.name, t.lane),
    server: t.server,
    tool: t.tool,
  }));
}

/** One line per tool: name, lane, and where an MCP tool comes from. */
export function formatTools(tools: readonly SessionTool[]): string[] {
  const width = Math.max(0, ...tools.map((t) => t.name.length));
  return tools.map((t) => `${t.name.padEnd(width)}  ${t.lane}${t.approval ? ', waits for approval' : ''}${t.server ? `  (MCP ${t.server}/${t.tool})` : ''}`);
}
