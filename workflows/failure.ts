import { ActivityFailure, ApplicationFailure, CancelledFailure, TerminatedFailure, TimeoutFailure } from '@temporalio/workflow';
import { SDK_PAYLOADS_TOO_LARGE, TIMEOUT_ERROR_TYPES, WORKFLOW_ERROR_TYPES } from '../contracts/errors';
import { isFailureType } from '../contracts/failure-types';
import type { FailureSummary } from '../contracts/session-log';

/**
 * The failure a turn reports: the original cause's stable type, not the wrapper's. An LLM
 * call that gave up on a 529 reports `overloaded`; a tool whose activity timed out reports
 * `start_to_close_timeout`; a cancelled turn reports `cancelled`. Every type it returns is
 * in `FAILURE_TYPES`: a failure of any other type (an activity that threw a plain Error,
 * a type nobody catalogued) is an `internal_error` whose message starts with that type.
 */
export function summarizeFailure(error: unknown): FailureSummary {
  if (error instanceof ActivityFailure && error.cause) {
    const inner = summarizeFailure(error.cause);
    return { type: inner.type, message: `${error.activityType}: ${inner.message}` };
  }
  if (isPayloadsTooLarge(error)) return { type: WORKFLOW_ERROR_TYPES.tooLarge, message: (error as ApplicationFailure).message };
  if (error instanceof ApplicationFailure) return catalogued(error.type, error.message);
  if (error instanceof TimeoutFailure) return timedOut(error);
  if (isCancellation(error)) return { type: WORKFLOW_ERROR_TYPES.cancelled, message: 'the turn was cancelled' };
  if (error instanceof TerminatedFailure) return { type: WORKFLOW_ERROR_TYPES.terminated, message: error.message };
  const message = error instanceof Error ? error.message : String(error);
  return { type: WORKFLOW_ERROR_TYPES.internal, message };
}

function catalogued(type: string | undefined | null, message: string): FailureSummary {
  if (type && isFailureType(type)) return { type, message };
  return { type: WORKFLOW_ERROR_TYPES.internal, message: `${type || 'Error'}: ${message}` };
}

function timedOut(error: TimeoutFailure): FailureSummary {
  const type = error.timeoutType === undefined ? undefined : TIMEOUT_ERROR_TYPES[error.timeoutType];
  return type ? { type, message: error.message } : { type: WORKFLOW_ERROR_TYPES.internal, message: `a timeout of unknown kind: ${error.message}` };
}

/** An activity whose result Temporal refused as too large: the activity ran, its answer was dropped. */
export function isPayloadsTooLarge(error: unknown): boolean {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  return cause instanceof ApplicationFailure && cause.type === SDK_PAYLOADS_TOO_LARGE;
}

export function isCancellation(error: unknown): boolean {
  if (error instanceof CancelledFailure) return true;
  return error instanceof ActivityFailure && error.cause instanceof CancelledFailure;
}
