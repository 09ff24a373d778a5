import { ActivityCancellationType, proxyActivities } from '@temporalio/workflow';
import type { SessionConfig } from '../contracts/api';
import { isPayloadsTooLarge } from './failure';
import type { ToolCall } from '../contracts/messages';
import type { ScheduledCall } from './scheduler';
import type { SessionEvent } from '../contracts/session-log';
import { repeatedCallOutcome } from './turn-guards';
import type { TurnRuntime } from './turn';
import { toolActivityOptions } from './tools/activity-options';
import { waitsForApproval } from '../contracts/tools/approval-patterns';
import type { McpSessionTools } from './tools/mcp-session';
import { prepareToolCall, type BuiltinTool } from '../contracts/tools/registry';
import { positionIdempotencyKey } from '../contracts/tools/idempotency-key';
import type { ToolActivities, ToolOutcome } from '../contracts/tools/tool-outcome';

const tools = proxyActivities<ToolActivities>({
  startToCloseTimeout: '1 minute',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

/** What the session's tool policy reads: its settings, its tools and its log. */
export interface ToolDispatchContext {
  config: SessionConfig;
  workflowId: string;
  enabledTools: readonly BuiltinTool[];
  mcpTools: McpSessionTools;
  events: () => readonly SessionEvent[];
}

/**
 * The session's tool policy: which calls are answered without running (repeats, invalid
 * input), which wait for a human, and how the rest run: activity options, a per-tool
 * timeout, an idempotency key for side effects, and a result kept within the payload limit.
 */
export function toolDispatch(ctx: ToolDispatchContext): Pick<TurnRuntime, 'prepare' | 'dispatchTool'> {
  const { config, workflowId, enabledTools, mcpTools } = ctx;
  return {
    prepare: (call): ScheduledCall => {
      const repeated = repeatedCallOutcome(ctx.events(), call, config.maxRepeats);
      if (repeated) return { kind: 'answer', call, outcome: repeated };
      const prepared = mcpTools.owns(call.name) ? mcpTools.prepare(call) : prepareToolCall(call, [...enabledTools, ...mcpTools.definitions()]);
      if (prepared.kind === 'invalid') return { kind: 'answer', call, outcome: { code: 'error', content: prepared.content } };
      // A pattern that names a tool holds its calls in the read-only lane too (an MCP server's
      // `readOnlyHint` is its own word), and such a call runs as the operator took it: alone,
      // once, after the decision.
      const needsApproval = waitsForApproval(config.approvalRequired, call.name, prepared.toolClass);
      const toolClass = needsApproval ? 'side_effecting' : prepared.toolClass;
      return { kind: 'dispatch', call: { ...call, input: prepared.input as ToolCall['input'] }, toolClass, needsApproval };
    },
    dispatchTool: (turn, step, call, toolClass) => {
      if (mcpTools.owns(call.name)) return keepWithinPayloadLimit(mcpTools.dispatch(step, call, toolClass));
      const tool = enabledTools.find((t) => t.name === call.name);
      if (!tool) throw new Error(`tool ${call.name} vanished between preparation and dispatch`);
      const timeout = config.toolTimeouts[call.name];
      const options = {
        ...toolActivityOptions(tool, toolClass),
        ...(timeout === undefined ? {} : { startToCloseTimeout: timeout }),
        summary: `step ${step} · tool ${call.name} #${call.id}`,
      };
      const request = {
        name: call.name,
        input: call.input,
        callId: call.id,
        ...(toolClass === 'side_effecting' ? { idempotencyKey: positionIdempotencyKey(workflowId, { turn, step, callId: call.id }) } : {}),
      };
      return keepWithinPayloadLimit(tools.runTool.executeWithOptions(options, [request]));
    },
  };
}

/** A tool ran, and its answer is above Temporal's payload limit: tell the model, and go on. */
function keepWithinPayloadLimit(running: Promise<ToolOutcome>): Promise<ToolOutcome> {
  return running.catch((error: unknown) => {
    if (!isPayloadsTooLarge(error)) throw error;
    return {
      code: 'error' as const,
      content: "The call ran, but its result was larger than Temporal's 2 MiB payload limit and was dropped. Ask for less (a range, a summary, a smaller page).",
    };
  });
}
