import type { Dispatcher } from 'undici';
import type { LlmActivities } from '../contracts/llm-call';
import type { McpActivities } from '../contracts/tools/mcp-tools';
import type { ToolActivities } from '../contracts/tools/tool-outcome';
import { createLlmActivities, type LlmActivityDeps } from './llm/activity';
import { createMcpActivities, type McpConnections } from './mcp';
import { createToolActivities } from './tools';
import { withArgumentsOnSpan, withMcpArgumentsOnSpan } from './tools/tool-arguments-span';

export interface ActivityDeps {
  dispatcher: Dispatcher;
  llm: Omit<LlmActivityDeps, 'dispatcher'>;
  tools: { workspaceDir: string; httpAllowlist: string[]; maxResponseBytes: number };
  /** The worker's connections to the servers of AGENT_MCP_CONFIG (none configured: no server). */
  mcp: McpConnections;
  /** `AGENT_TRACE_CONTENT=true`: spans carry prompts and tool arguments. */
  traceContent?: boolean;
}

export type AgentActivities = LlmActivities & ToolActivities & McpActivities;

export function createActivities(deps: ActivityDeps): AgentActivities {
  return {
    ...createLlmActivities({ dispatcher: deps.dispatcher, ...deps.llm }),
    ...traceArguments(createToolActivities({ dispatcher: deps.dispatcher, ...deps.tools }), deps.traceContent === true),
    ...traceMcpArguments(createMcpActivities(deps.mcp), deps.traceContent === true),
  };
}

function traceArguments(tools: ToolActivities, content: boolean): ToolActivities {
  return content ? withArgumentsOnSpan(tools) : tools;
}

function traceMcpArguments(mcp: McpActivities, content: boolean): McpActivities {
  return content ? withMcpArgumentsOnSpan(mcp) : mcp;
}
