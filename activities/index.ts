import type { Dispatcher } from 'undici';
import type { LlmActivities } from '../workflows/llm-call';
import type { McpActivities } from '../workflows/tools/mcp-tools';
import type { ToolActivities } from '../workflows/tools/tool-outcome';
import { createLlmActivities, type LlmActivityDeps } from './llm/activity';
import { createMcpActivities, type McpConnections } from './mcp';
import { createToolActivities } from './tools';

export interface ActivityDeps {
  dispatcher: Dispatcher;
  llm: Omit<LlmActivityDeps, 'dispatcher'>;
  tools: { workspaceDir: string; httpAllowlist: string[]; maxResponseBytes: number };
  /** The worker's connections to the servers of AGENT_MCP_CONFIG (none configured: no server). */
  mcp: McpConnections;
}

export type AgentActivities = LlmActivities & ToolActivities & McpActivities;

export function createActivities(deps: ActivityDeps): AgentActivities {
  return {
    ...createLlmActivities({ dispatcher: deps.dispatcher, ...deps.llm }),
    ...createToolActivities({ dispatcher: deps.dispatcher, ...deps.tools }),
    ...createMcpActivities(deps.mcp),
  };
}
