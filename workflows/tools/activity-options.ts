import { SDK_PAYLOADS_TOO_LARGE, WORKFLOW_ERROR_TYPES } from '../../contracts/errors';
import type { AnyToolDefinition, ToolClass } from '../../contracts/tools/tool-definition';

/**
 * Retries for read-only calls. They only cover infrastructure failures (a lost worker, a
 * heartbeat timeout): a tool-reported error is a result, not a failure, so it never comes
 * here. Three attempts ride out one lost worker without letting a broken one hold the step
 * for minutes. `internal_error` is a bug (e.g. a worker without the tool): retrying cannot fix it,
 * and neither can it shrink a result above the payload limit.
 */
export const READ_ONLY_TOOL_RETRY = {
  maximumAttempts: 3,
  initialInterval: 1_000,
  backoffCoefficient: 2,
  maximumInterval: 10_000,
  nonRetryableErrorTypes: [WORKFLOW_ERROR_TYPES.internal, SDK_PAYLOADS_TOO_LARGE],
} as const;

/** A second attempt could repeat a side effect whose first outcome is unknown. */
export const SIDE_EFFECTING_TOOL_RETRY = { maximumAttempts: 1 } as const;

export interface ToolActivityOptions {
  startToCloseTimeout: number;
  heartbeatTimeout?: number;
  retry: { maximumAttempts: number; initialInterval?: number; backoffCoefficient?: number; maximumInterval?: number; nonRetryableErrorTypes?: string[] };
}

/**
 * The Temporal activity options for one call, in milliseconds, so this file needs no
 * Temporal import; the shape is assignable to `ActivityOptions`.
 */
export function toolActivityOptions(tool: AnyToolDefinition, toolClass: ToolClass): ToolActivityOptions {
  const retry =
    toolClass === 'read_only'
      ? { ...READ_ONLY_TOOL_RETRY, nonRetryableErrorTypes: [...READ_ONLY_TOOL_RETRY.nonRetryableErrorTypes] }
      : { ...SIDE_EFFECTING_TOOL_RETRY };
  const options: ToolActivityOptions = { startToCloseTimeout: tool.timeouts.startToCloseMs, retry };
  if (tool.timeouts.heartbeatMs !== undefined) options.heartbeatTimeout = tool.timeouts.heartbeatMs;
  return options;
}
