import { z } from 'zod';
import { MAX_EVENT_LIST_ENTRIES, type ToolSpec } from '../messages';
import { latestCustomToolOffer } from './custom-tool-offer';
import { latestSubAgentOffer, SUB_AGENT_INPUT_JSON_SCHEMA } from '../sub-agents';
import { HANDOFF_INPUT_JSON_SCHEMA } from '../handoffs';
import type { ToolOutcome } from './tool-outcome';
import type { ToolClass } from './tool-definition';

/**
 * MCP tools as a session records them. The worker lists its servers' tools through an
 * activity; the session writes the list into its log (`tools/listed`), and everything
 * after reads the list from there: the LLM activity offers it, the workflow dispatches by
 * it. So a replay, a retried LLM call and a fork see the tools of their
 * log, never whatever a server lists today.
 */

/** A server's name as the config file and `--mcp` give it: it becomes part of tool names. */
export const McpServerNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,32}$/, { error: 'an MCP server name has 1 to 32 letters, digits, _ or -' })
  .refine((name) => !name.includes('__'), { error: 'an MCP server name must not contain "__" (it separates the parts of a tool name)' });

export const McpToolSchema = z.object({
  /** The name the model sees: `mcp__<server>__<tool>`, see `mcpToolName`. */
  name: z.string(),
  server: z.string(),
  /** The tool's own name on its server, which `tools/call` needs. */
  tool: z.string(),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
  lane: z.enum(['read_only', 'side_effecting']),
  /** The server's per-call limit (config `timeoutMs`), recorded so the call's activity timeout is part of the log too. */
  timeoutMs: z.number().int().positive(),
});
export type McpTool = z.infer<typeof McpToolSchema>;

export const McpToolListSchema = z.object({ servers: z.array(z.string()).max(MAX_EVENT_LIST_ENTRIES), tools: z.array(McpToolSchema).max(MAX_EVENT_LIST_ENTRIES) });
export type McpToolList = z.infer<typeof McpToolListSchema>;

/** Anthropic, OpenAI and Gemini all cap a function name at 64 characters of this alphabet. */
export const PROVIDER_TOOL_NAME_MAX = 64;

/**
 * `mcp__<server>__<tool>`, with characters no provider accepts replaced by `_`, cut to 64.
 * Cutting can make two names equal: the listing refuses that instead of letting one hide
 * the other.
 */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, PROVIDER_TOOL_NAME_MAX);
}

export interface ListMcpToolsRequest {
  servers: string[];
}

export interface CallMcpToolRequest {
  server: string;
  tool: string;
  arguments: Record<string, unknown>;
  callId: string;
  /**
   * The lane the session runs the call in. The worker runs a call only in a lane its own
   * configuration allows: a read-only call of a tool it takes for side-effecting is refused.
   * The limit of the call is the worker's `timeoutMs` for the server, never the session's.
   */
  lane: ToolClass;
}

/**
 * How much JSON a call's arguments may be. The workflow checks only this and that they are
 * an object; the tool's own schema is the worker's to check (activities/mcp/check-arguments.ts).
 */
export const MCP_ARGUMENTS_MAX_CHARS = 256 * 1024;

/** The MCP activities' signatures, for `proxyActivities` in the workflow. */
export interface McpActivities {
  listMcpTools(request: ListMcpToolsRequest): Promise<McpToolList>;
  callMcpTool(request: CallMcpToolRequest): Promise<ToolOutcome>;
}

/** The newest tool list among `events`, if any was recorded. */
export function latestMcpToolList(events: readonly { type: string }[]): McpToolList | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as { type: string } & Partial<McpToolList>;
    if (e.type === 'tools/listed' && e.servers && e.tools) return { servers: e.servers, tools: e.tools };
  }
  return undefined;
}

/** The specs the provider request lists: the built-in tools, then the MCP, the custom tools and the sub-agents recorded among `events`. */
export function withMcpToolSpecs(builtin: readonly ToolSpec[], events: readonly { type: string }[]): ToolSpec[] {
  const listed = [...(latestMcpToolList(events)?.tools ?? []), ...(latestCustomToolOffer(events) ?? [])];
  // A handoff's offer (contracts/handoffs.ts) takes a reason, a sub-agent's a task.
  const agents = (latestSubAgentOffer(events) ?? []).map((a) => ({ name: a.name, description: a.description, inputSchema: a.kind === 'handoff' ? HANDOFF_INPUT_JSON_SCHEMA : SUB_AGENT_INPUT_JSON_SCHEMA }));
  return [...builtin, ...listed.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })), ...agents];
}
