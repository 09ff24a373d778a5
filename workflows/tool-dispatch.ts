import { ActivityCancellationType, proxyActivities } from '@temporalio/workflow';
import { isPayloadsTooLarge } from './failure';
import type { ToolCall } from '../contracts/messages';
import type { ScheduledCall } from './scheduler';
import type { Session } from './session-run';
import { SubAgentTools } from './sub-agents';
import { repeatedCallOutcome } from './turn-guards';
import { toolActivityOptions } from './tools/activity-options';
import { waitsForApproval } from '../contracts/tools/approval-patterns';
import { prepareToolCall, type BuiltinTool } from '../contracts/tools/registry';
import { positionIdempotencyKey } from '../contracts/tools/idempotency-key';
import type { ToolClass } from '../contracts/tools/tool-definition';
import type { ToolActivities, ToolOutcome } from '../contracts/tools/tool-outcome';

const tools = proxyActivities<ToolActivities>({
  startToCloseTimeout: '1 minute',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

/** What the tool policy reads of its session: its settings, its MCP and custom tools and its log; its state and budget for sub-agents. */
type ToolSession = Pick<Session, 'config' | 'workflowId' | 'mcpTools' | 'customTools' | 'log' | 'state' | 'budget'>;

/**
 * The session's tool policy: which calls are answered without running (repeats, invalid
 * input), which wait for a human, and how the rest run: activity options, a per-tool
 * timeout, an idempotency key for side effects, and a result kept within the payload limit.
 */
export class ToolDispatch {
  readonly #session: ToolSession;
  readonly #enabledTools: readonly BuiltinTool[];
  /** The session's sub-agents, called as child sessions (./sub-agents.ts). */
  readonly #subAgents: SubAgentTools;

  constructor(session: ToolSession, enabledTools: readonly BuiltinTool[]) {
    this.#session = session;
    this.#enabledTools = enabledTools;
    this.#subAgents = new SubAgentTools(session);
  }

  /**
   * Before a step's calls are prepared: the lanes of custom tools whose lane is a function of
   * their input, from the worker. `undefined` when there is none to decide, so a step without
   * such a call awaits nothing here.
   */
  decideLanes(calls: readonly ToolCall[]): Promise<void> | undefined {
    return this.#session.customTools.decideLanes(calls);
  }

  /** What becomes of a call the model made: answered at once, or dispatched in its lane, after a human's decision if it needs one. */
  prepare(call: ToolCall): ScheduledCall {
    const { config, mcpTools, customTools, log } = this.#session;
    const repeated = repeatedCallOutcome(log.events, call, config.maxRepeats);
    if (repeated) return { kind: 'answer', call, outcome: repeated };
    const subAgents = this.#subAgents;
    const prepared = subAgents.owns(call.name)
      ? subAgents.prepare(call)
      : mcpTools.owns(call.name)
        ? mcpTools.prepare(call)
        : customTools.owns(call.name)
          ? customTools.prepare(call)
          : prepareToolCall(call, [...this.#enabledTools, ...mcpTools.definitions(), ...customTools.definitions(), ...subAgents.definitions()]);
    if (prepared.kind === 'invalid') return { kind: 'answer', call, outcome: { code: 'error', content: prepared.content } };
    // A pattern that names a tool holds its calls in the read-only lane too (an MCP server's
    // `readOnlyHint` is its own word), and such a call runs as the operator took it: alone,
    // once, after the decision.
    const needsApproval = waitsForApproval(config.approvalRequired, call.name, prepared.toolClass);
    const toolClass = needsApproval ? 'side_effecting' : prepared.toolClass;
    return { kind: 'dispatch', call: { ...call, input: prepared.input as ToolCall['input'] }, toolClass, needsApproval };
  }

  /** What a call's `tool/call` records beside the call: the child session a sub-agent's call starts; nothing for any other tool. */
  recordedWith(turn: number, step: number, call: ToolCall): { child?: { workflowId: string; agent: string } } {
    const child = this.#subAgents.childOf(turn, step, call);
    return child ? { child } : {};
  }

  /**
   * Runs a prepared call's activity (a sub-agent's call: its child session); a result above
   * the payload limit becomes an error result the model reads.
   */
  dispatch(turn: number, step: number, call: ToolCall, toolClass: ToolClass): Promise<ToolOutcome> {
    const { config, workflowId, mcpTools, customTools, state } = this.#session;
    // A call after the one that handed the conversation over is not this session's to run (./handoff.ts).
    const handed = state.handedOffTo;
    if (handed) return Promise.resolve({ code: 'error', content: `Not run: the conversation was handed to ${handed.to.agent} (session ${handed.to.workflowId}) before this call.` });
    // Its outcome carries the child's spend and failure, which the step records with the result.
    if (this.#subAgents.owns(call.name)) return keepWithinPayloadLimit(this.#subAgents.dispatch(turn, step, call));
    if (mcpTools.owns(call.name)) return keepWithinPayloadLimit(mcpTools.dispatch(step, call, toolClass));
    if (customTools.owns(call.name)) return keepWithinPayloadLimit(customTools.dispatch(workflowId, turn, step, call, toolClass));
    const tool = this.#enabledTools.find((t) => t.name === call.name);
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
  }
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
