import { trace } from '@opentelemetry/api';
import type { ToolActivities } from '../../workflows/tools/tool-outcome';

/**
 * `AGENT_TRACE_CONTENT=true`: each attempt's span of a built-in tool call also carries the
 * call's arguments (by default no span ever does, since they may hold what the user wrote).
 */
export function withArgumentsOnSpan(tools: ToolActivities): ToolActivities {
  return {
    runTool(request) {
      trace.getActiveSpan()?.setAttributes({ 'agent.tool.name': request.name, 'agent.tool.arguments': JSON.stringify(request.input) });
      return tools.runTool(request);
    },
  };
}
