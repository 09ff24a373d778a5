import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import { TOOL_ERROR_TYPES } from '../../contracts/errors';
import { ToolError, type CustomTool, type ToolContext } from '../../contracts/tools/custom-tool';
import type { RunCustomToolRequest } from '../../contracts/tools/custom-tool-offer';
import type { ToolOutcome } from '../../contracts/tools/tool-outcome';
import { validateToolInput } from '../../contracts/tools/validate-tool-input';
import { redactSecrets } from '../llm/llm-error';
import { laneOf } from './lane';
import { resultOutcome } from './result-text';

/**
 * Cancellation reaches an activity only in a heartbeat's response: this keeps them going
 * while `run` runs, every 2 s, or three times per heartbeat timeout when the tool's is
 * shorter (a 1 s timeout would otherwise fire before the first beat).
 */
const HEARTBEAT_EVERY_MS = 2_000;

/**
 * One call of a custom tool, under the worker's own definition of it: its schema parses the
 * arguments (the workflow checked only that they are a bounded object), and a read-only call
 * of a tool this worker takes for side-effecting is refused rather than run in parallel and
 * retried. A `ToolError` is a result the model reads; anything else `run` throws is a failure
 * of the call, which Temporal retries in the read-only lane and which fails the step in the
 * side-effecting one (then compensation answers the call `TOOL_OUTCOME_UNKNOWN`).
 */
export async function runCustomTool(tools: ReadonlyMap<string, CustomTool>, request: RunCustomToolRequest): Promise<ToolOutcome> {
  const tool = tools.get(request.name);
  if (!tool) return { code: 'error', content: `Tool call rejected: this worker has no custom tool "${request.name}" any more, so it was not run. Tell the user to list the session's tools again (refresh-tools).` };
  const parsed = validateToolInput(tool, request.input);
  if (!parsed.ok) return { code: 'error', content: parsed.content };
  if (request.lane === 'read_only' && laneOf(tool, parsed.input) === 'side_effecting') {
    return {
      code: 'error',
      content: `The call was not run: this worker takes "${tool.name}" for side-effecting here, but the session's tool list has it read-only. Tell the user to list the session's tools again (refresh-tools).`,
    };
  }
  const activity = Context.current();
  // The ticker repeats the details `run` last gave: a beat without them would replace them.
  let details: unknown = activity.info.heartbeatDetails;
  const ctx: ToolContext = {
    idempotencyKey: request.idempotencyKey,
    signal: activity.cancellationSignal,
    heartbeat: (given) => {
      details = given;
      activity.heartbeat(given);
    },
    heartbeatDetails: activity.info.heartbeatDetails,
    sessionId: request.sessionId,
    turn: request.turn,
    step: request.step,
    callId: request.callId,
  };
  const timeoutMs = activity.info.heartbeatTimeoutMs;
  const ticker = setInterval(() => activity.heartbeat(details), timeoutMs ? Math.min(HEARTBEAT_EVERY_MS, Math.floor(timeoutMs / 3)) : HEARTBEAT_EVERY_MS);
  try {
    return resultOutcome(tool.name, await tool.run(parsed.input, ctx), tool.maxResultChars);
  } catch (error) {
    if (activity.cancellationSignal.aborted) throw new CancelledFailure(`the call of custom tool "${tool.name}" was cancelled`);
    // The model reads a ToolError whole, within the tool's result limit like any result.
    if (error instanceof ToolError) return { code: 'error', content: clip(error.message, tool.maxResultChars) };
    const message = error instanceof Error ? error.message : String(error);
    // One line, bounded and without a credential an SDK's error quoted: it lands in history and in the step's failure.
    throw ApplicationFailure.create({ type: TOOL_ERROR_TYPES.failed, message: `custom tool "${tool.name}" failed: ${clip(redactSecrets(message.split('\n')[0] ?? ''), FAILURE_MESSAGE_CHARS)}` });
  } finally {
    clearInterval(ticker);
  }
}

/** A failure's message past this is cut: a thrown error may quote a whole request or response. */
const FAILURE_MESSAGE_CHARS = 1_000;

const clip = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);
