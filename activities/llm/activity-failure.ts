import { ApplicationFailure, CancelledFailure } from '@temporalio/activity';
import type { LlmErrorType, LlmFailureDetails, RetryStopReason } from '../../contracts/errors';
import type { LadderSoFar } from '../../contracts/llm-call';
import { isAbortError } from './abort-error';
import type { RetryDecision } from './backoff';
import { LlmError } from './llm-error';

/** Who failed, and how the activity's failure must read: every message leaves through `redact`. */
export interface FailureContext {
  provider: string;
  redact: (text: string) => string;
  /** Read when the failure leaves. */
  cancelled: boolean;
  /** What the call has spent of its ladder: a cancel carries it to the call's next schedule. */
  ladder: LadderSoFar;
}

/**
 * The retry after a lost attempt that the ladder will not let out (see
 * `admitAfterLostAttempt`): thrown before any request, with the ladder's reason.
 */
export class LostAttemptError extends Error {
  constructor(
    lostAttempt: number,
    readonly reason: RetryStopReason,
  ) {
    super(`attempt ${lostAttempt} was lost (its worker stopped, or it went silent past the heartbeat timeout)`);
    this.name = 'LostAttemptError';
  }
}

/** A lost attempt is a connection that went silent, from the ladder's point of view. */
const LOST_ATTEMPT_TYPE: LlmErrorType = 'network_error';

const UNCLASSIFIED_TYPE: LlmErrorType = 'unknown';

/**
 * How one failed attempt leaves the activity; the one place that builds its failure.
 * Cancellation first: an aborted request surfaces as some error, and none of them may be
 * reported, or retried, as a network failure; its details are the ladder so far, which
 * the workflow carries when it cancelled the call to schedule it again with a new policy. A provider error leaves as the ladder
 * decided: retryable with `nextRetryDelay`, or non-retryable with the same `type` and the
 * reason, so the UI and the client see why it stopped. Anything else is not retried.
 */
export function toActivityFailure(error: unknown, decision: RetryDecision | undefined, where: FailureContext): ApplicationFailure | CancelledFailure {
  if (where.cancelled || isAbortError(error)) return new CancelledFailure('the LLM call was cancelled', [where.ladder]);
  if (LlmError.is(error) && decision !== undefined) return providerFailure(error, decision, where);
  if (error instanceof LostAttemptError) {
    return ApplicationFailure.create({
      type: LOST_ATTEMPT_TYPE,
      message: `${error.message} (not retried: ${error.reason})`,
      details: [{ provider: where.provider, stopReason: error.reason } satisfies LlmFailureDetails],
      nonRetryable: true,
    });
  }
  return unclassified(error, where);
}

function providerFailure(error: LlmError, decision: RetryDecision, where: FailureContext): ApplicationFailure {
  const message = where.redact(error.message);
  const details: LlmFailureDetails = {
    provider: where.provider,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    ...(decision.retry ? {} : { stopReason: decision.reason }),
  };
  if (decision.retry) return ApplicationFailure.create({ type: error.type, message, details: [details], nextRetryDelay: decision.delayMs });
  return ApplicationFailure.create({
    type: error.type,
    message: decision.reason === 'not_retryable' ? message : `${message} (not retried: ${decision.reason})`,
    details: [details],
    nonRetryable: true,
  });
}

/**
 * A failure that is not a classified provider error: a bug, a failed Query for the log.
 * Our own typed failures (and cancellation) pass as they are; anything else is `unknown`,
 * which is never retried: Temporal's fallback policy would retry it without jitter,
 * budget or the policy.
 */
function unclassified(error: unknown, where: FailureContext): ApplicationFailure | CancelledFailure {
  if (error instanceof ApplicationFailure || error instanceof CancelledFailure) return error;
  const message = where.redact(error instanceof Error ? error.message : String(error));
  const details: LlmFailureDetails = { provider: where.provider, stopReason: 'not_retryable' };
  return ApplicationFailure.create({
    type: UNCLASSIFIED_TYPE,
    message: `unexpected failure of the LLM call: ${message}`,
    details: [details],
    nonRetryable: true,
    cause: error instanceof Error ? redactedCause(error, where.redact) : undefined,
  });
}

/** The cause goes to history with its message and stack: the error itself when neither carries a key, else a masked copy. */
function redactedCause(error: Error, redact: (text: string) => string): Error {
  const message = redact(error.message);
  const stack = error.stack === undefined ? undefined : redact(error.stack);
  if (message === error.message && stack === error.stack) return error;
  const copy = new Error(message);
  copy.name = error.name;
  copy.stack = stack;
  return copy;
}
