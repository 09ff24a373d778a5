import type { Dispatcher } from 'undici';
import type { CustomTool } from '../contracts/tools/custom-tool';
import type { CustomToolActivities } from '../contracts/tools/custom-tool-offer';
import type { AgentCatalogueActivities } from '../contracts/agents/agent-catalogue';
import type { AgentDefinition } from '../contracts/agents/agent-definition';
import { createAgentActivities } from './agents/agent-catalogue';
import { createSubAgentActivities } from './agents/sub-agents';
import type { SubAgentActivities } from '../contracts/sub-agents';
import type { LlmActivities } from '../contracts/llm-call';
import type { McpActivities } from '../contracts/tools/mcp-tools';
import type { ToolActivities } from '../contracts/tools/tool-outcome';
import { createCustomToolActivities } from './custom-tools';
import { createLlmActivities, type LlmActivityDeps } from './llm/activity';
import { createMcpActivities, type McpConnections } from './mcp';
import { createToolActivities } from './tools';
import { withArgumentsOnSpan, withCustomArgumentsOnSpan, withMcpArgumentsOnSpan } from './tools/tool-arguments-span';

export interface ActivityDeps {
  dispatcher: Dispatcher;
  llm: Omit<LlmActivityDeps, 'dispatcher'>;
  tools: { workspaceDir: string; httpAllowlist: string[]; maxResponseBytes: number };
  /** The worker's connections to the servers of AGENT_MCP_CONFIG (none configured: no server). */
  mcp: McpConnections;
  /** `AGENT_TRACE_CONTENT=true`: spans carry prompts and tool arguments. */
  traceContent?: boolean;
  /** The tools of the user's own (`defineTool`) that sessions may be offered by name; checked here, once. */
  customTools?: readonly CustomTool[];
  /** The agents (`defineAgent`) sessions may be started as, by name; checked here, once. */
  agents?: readonly AgentDefinition[];
}

export type AgentActivities = LlmActivities & ToolActivities & McpActivities & CustomToolActivities & AgentCatalogueActivities & SubAgentActivities;

export function createActivities(deps: ActivityDeps): AgentActivities {
  return {
    ...createLlmActivities({ dispatcher: deps.dispatcher, ...deps.llm }),
    ...traceArguments(createToolActivities({ dispatcher: deps.dispatcher, ...deps.tools }), deps.traceContent === true),
    ...traceMcpArguments(createMcpActivities(deps.mcp), deps.traceContent === true),
    ...traceCustomArguments(createCustomToolActivities(deps.customTools ?? []), deps.traceContent === true),
    ...createAgentActivities(deps.agents ?? []),
    ...createSubAgentActivities(deps.agents ?? []),
  };
}

function traceArguments(tools: ToolActivities, content: boolean): ToolActivities {
  return content ? withArgumentsOnSpan(tools) : tools;
}

function traceMcpArguments(mcp: McpActivities, content: boolean): McpActivities {
  return content ? withMcpArgumentsOnSpan(mcp) : mcp;
}

function traceCustomArguments(custom: CustomToolActivities, content: boolean): CustomToolActivities {
  return content ? withCustomArgumentsOnSpan(custom) : custom;
}
