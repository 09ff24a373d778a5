import { z } from 'zod';
import type { ToolSpec } from '../messages';
import type { ToolOutcome } from './tool-outcome';

/**
 * MCP tools as a session records them. The worker lists its servers' tools through an
 * activity; the session writes the list into its log (`tools/listed`), and everything
 * after reads the list from there: the LLM activity offers it, the workflow validates and
 * dispatches by it. So a replay, a retried LLM call and a fork see the tools of their
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

export const McpToolListSchema = z.object({ servers: z.array(z.string()), tools: z.array(McpToolSchema) });
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
  timeoutMs: number;
}

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

/** The specs the provider request lists: the built-in tools and the MCP tools recorded among `events`. */
export function withMcpToolSpecs(builtin: readonly ToolSpec[], events: readonly { type: string }[]): ToolSpec[] {
  const listed = latestMcpToolList(events)?.tools ?? [];
  return [...builtin, ...listed.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }))];
}
