import { trace } from '@opentelemetry/api';
import type { CustomToolActivities } from '../../contracts/tools/custom-tool-offer';
import type { McpActivities } from '../../contracts/tools/mcp-tools';
import type { ToolActivities } from '../../contracts/tools/tool-outcome';

/**
 * `AGENT_TRACE_CONTENT=true`: each attempt's span of a tool call also carries the call's
 * arguments, for built-in, MCP and custom tools alike (by default no span ever does, since they
 * may hold what the user wrote).
 */
export function withArgumentsOnSpan(tools: ToolActivities): ToolActivities {
  return {
    runTool(request) {
      setArguments(request.name, request.input);
      return tools.runTool(request);
    },
  };
}

export function withMcpArgumentsOnSpan(mcp: McpActivities): McpActivities {
  return {
    listMcpTools: (request) => mcp.listMcpTools(request),
    callMcpTool(request) {
      trace.getActiveSpan()?.setAttribute('agent.mcp.server', request.server);
      setArguments(request.tool, request.arguments);
      return mcp.callMcpTool(request);
    },
  };
}

export function withCustomArgumentsOnSpan(custom: CustomToolActivities): CustomToolActivities {
  return {
    ...custom,
    runCustomTool(request) {
      setArguments(request.name, request.input);
      return custom.runCustomTool(request);
    },
  };
}

function setArguments(name: string, input: unknown): void {
  trace.getActiveSpan()?.setAttributes({ 'agent.tool.name': name, 'agent.tool.arguments': JSON.stringify(input) });
}
