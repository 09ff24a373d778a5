import type { BuiltinToolName } from '../contracts/tools/registry';
import { waitsForApproval } from '../contracts/tools/approval-patterns';
import { latestCustomToolOffer, type CustomToolOffer } from '../contracts/tools/custom-tool-offer';
import { latestMcpToolList, type McpToolList } from '../contracts/tools/mcp-tools';
import { CUSTOM_LANE_NAMES } from './output';
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
  /** A tool of the worker's own (`defineTool`), as the session's log recorded its offer. */
  custom?: true;
}

/** The built-in tools' lanes, as their `classify` decides them (http_request per method). */
const BUILTIN_LANES: Record<BuiltinToolName, 'read-only' | 'side-effecting' | 'read-only for GET and HEAD, side-effecting otherwise'> = {
  calculator: 'read-only',
  http_request: 'read-only for GET and HEAD, side-effecting otherwise',
  read_file: 'read-only',
  write_file: 'side-effecting',
};

const LANE_NAMES = { read_only: 'read-only', side_effecting: 'side-effecting' } as const;

/** The tools a session offers now: its built-in ones, then the MCP and custom tools its log recorded last. */
export async function sessionTools(handle: Pick<SessionHandle, 'client' | 'workflowId' | 'query'>): Promise<SessionTool[]> {
  const { state, events } = await readLatestRunLog(handle);
  const approvals = state.settings.approvalRequired;
  const builtin = state.settings.tools.map((name) => ({
    name,
    lane: BUILTIN_LANES[name],
    // http_request's side-effecting methods are the ones `*` holds; a pattern naming it holds GETs too.
    approval: waitsForApproval(approvals, name, BUILTIN_LANES[name] === 'read-only' ? 'read_only' : 'side_effecting'),
  }));
  return [...builtin, ...mcpTools(latestMcpToolList(events), approvals), ...customTools(latestCustomToolOffer(events), approvals)];
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

function customTools(offer: readonly CustomToolOffer[] | undefined, approvals: readonly string[]): SessionTool[] {
  return (offer ?? []).map((t) => ({
    name: t.name,
    lane: CUSTOM_LANE_NAMES[t.lane],
    // As for http_request: `*` holds the calls the worker takes for side-effecting, a pattern naming the tool holds every call.
    approval: waitsForApproval(approvals, t.name, t.lane === 'read_only' ? 'read_only' : 'side_effecting'),
    custom: true,
  }));
}

/** One line per tool: name, lane, and where an MCP or custom tool comes from. */
export function formatTools(tools: readonly SessionTool[]): string[] {
  const width = Math.max(0, ...tools.map((t) => t.name.length));
  return tools.map((t) => `${t.name.padEnd(width)}  ${t.lane}${t.approval ? ', waits for approval' : ''}${t.server ? `  (MCP ${t.server}/${t.tool})` : ''}${t.custom ? '  (custom)' : ''}`);
}
