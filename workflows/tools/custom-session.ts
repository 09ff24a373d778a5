import { ActivityCancellationType, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import { TOOL_ERROR_TYPES } from '../../contracts/errors';
import type { ToolCall } from '../../contracts/messages';
import type { SessionEvent } from '../../contracts/session-log';
import { latestCustomToolOffer, type CustomToolActivities, type CustomToolLaneDecision, type CustomToolOffer } from '../../contracts/tools/custom-tool-offer';
import { positionIdempotencyKey } from '../../contracts/tools/idempotency-key';
import { prepareToolCall, type PreparedToolCall } from '../../contracts/tools/registry';
import type { AnyToolDefinition, ToolClass } from '../../contracts/tools/tool-definition';
import { RecordedOffer } from './recorded-offer';
import type { ToolOutcome } from '../../contracts/tools/tool-outcome';
import { READ_ONLY_TOOL_RETRY, toolActivityOptions } from './activity-options';
import { BoundedArguments } from './mcp-session';

const listing = proxyActivities<CustomToolActivities>({
  startToCloseTimeout: '1 minute',
  retry: { ...READ_ONLY_TOOL_RETRY, nonRetryableErrorTypes: [...READ_ONLY_TOOL_RETRY.nonRetryableErrorTypes, TOOL_ERROR_TYPES.unknownCustomTool] },
});
const calls = proxyActivities<CustomToolActivities>({
  startToCloseTimeout: '1 minute',
  // The turn ends only once the tool has seen its signal abort and returned, as with the built-in tools.
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});
// Pure work on the worker (a zod parse and the tool's own `sideEffects`): a local activity,
// whose answer history keeps as a marker, so a replay sees the lanes the calls ran in.
const lanes = proxyLocalActivities<CustomToolActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { ...READ_ONLY_TOOL_RETRY, nonRetryableErrorTypes: [...READ_ONLY_TOOL_RETRY.nonRetryableErrorTypes] },
});

/**
 * A session's custom tools (`defineTool`): offered by name in its input, listed once by the
 * worker and recorded in the log with the MCP tools (`tools/listed`, its `custom` field), then
 * read from the log only. The workflow never sees a tool's code: it dispatches by the recorded
 * lane, and for a tool whose lane is a function of its input (`by_input`) it asks the worker
 * for the lanes of a step's calls before it schedules them.
 */
export class CustomSessionTools {
  readonly #names: readonly string[];
  readonly #events: () => readonly SessionEvent[];
  readonly #recordedOffer: RecordedOffer<CustomToolOffer, RecordedTool>;
  /** The lanes the worker decided for the current step's `by_input` calls, by call id. */
  #decided = new Map<string, CustomToolLaneDecision>();

  constructor(names: readonly string[], events: () => readonly SessionEvent[]) {
    this.#names = names;
    this.#events = events;
    this.#recordedOffer = new RecordedOffer(() => latestCustomToolOffer(this.#events()), recordedTool);
  }

  /** Whether the session's input names any custom tool. */
  get offered(): boolean {
    return this.#names.length > 0;
  }

  /** The worker's offer of the named tools, to be recorded; a name it does not know fails the listing (`unknown_custom_tool`). */
  list(): Promise<CustomToolOffer[]> {
    return listing.listCustomTools.executeWithOptions({ summary: `custom tools ${this.#names.join(', ')}` }, [{ names: [...this.#names] }]);
  }

  definitions(): AnyToolDefinition[] {
    return this.#recordedOffer.definitions();
  }

  owns(name: string): boolean {
    return this.#recordedOffer.owns(name);
  }

  /**
   * The lanes of the calls of tools whose lane depends on their input, decided by the worker;
   * `undefined` (nothing awaited, no command) when the step has no such call.
   */
  decideLanes(toolCalls: readonly ToolCall[]): Promise<void> | undefined {
    const recorded = this.#recorded();
    const asked = toolCalls.filter((call) => recorded.get(call.name)?.offer.lane === 'by_input' && call.invalidJson === undefined);
    this.#decided = new Map();
    if (asked.length === 0) return undefined;
    return lanes.decideCustomToolLanes
      .executeWithOptions({ summary: `lanes of ${asked.map((c) => c.name).join(', ')}` }, [{ calls: asked.map((call) => ({ name: call.name, input: call.input })) }])
      .then((decisions) => {
        this.#decided = new Map(asked.map((call, i) => [call.id, decisions[i] ?? { lane: 'side_effecting' }]));
      });
  }

  /** As `prepareToolCall` decides for a built-in tool, the arguments checked only to be a bounded object (the worker parses them with the tool's schema). */
  prepare(call: ToolCall): PreparedToolCall {
    const entry = this.#recorded().get(call.name);
    if (!entry) throw new Error(`custom tool ${call.name} is not among the recorded tools`);
    const prepared = prepareToolCall(call, [entry.definition]);
    if (prepared.kind === 'invalid' || entry.offer.lane !== 'by_input') return prepared;
    const decided = this.#decided.get(call.id);
    if (decided && 'invalid' in decided) return { kind: 'invalid', content: decided.invalid };
    return { ...prepared, toolClass: decided?.lane ?? 'side_effecting' };
  }

  dispatch(workflowId: string, turn: number, step: number, call: ToolCall, toolClass: ToolClass): Promise<ToolOutcome> {
    const entry = this.#recorded().get(call.name);
    if (!entry) throw new Error(`custom tool ${call.name} vanished between preparation and dispatch`);
    const options = toolActivityOptions(entry.definition, toolClass);
    if (toolClass === 'read_only') options.retry.maximumAttempts = entry.offer.maxAttempts;
    return calls.runCustomTool.executeWithOptions({ ...options, summary: `step ${step} · tool ${call.name} #${call.id}` }, [
      {
        name: call.name,
        sessionId: workflowId,
        input: call.input,
        callId: call.id,
        turn,
        step,
        idempotencyKey: positionIdempotencyKey(workflowId, { turn, step, callId: call.id }),
        lane: toolClass,
      },
    ]);
  }

  #recorded(): Map<string, RecordedTool> {
    return this.#recordedOffer.byName();
  }
}

interface RecordedTool {
  offer: CustomToolOffer;
  definition: AnyToolDefinition;
}

function recordedTool(offer: CustomToolOffer): RecordedTool {
  const definition: AnyToolDefinition = {
    name: offer.name,
    description: offer.description,
    input: BoundedArguments,
    // `by_input` is decided per call (`decideLanes`); until then the lane that never repeats a call.
    classify: () => (offer.lane === 'read_only' ? 'read_only' : 'side_effecting'),
    timeouts: { startToCloseMs: offer.timeoutMs, heartbeatMs: offer.heartbeatTimeoutMs },
  };
  return { offer, definition };
}
