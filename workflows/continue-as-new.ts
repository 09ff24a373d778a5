import { ApplicationFailure, makeContinueAsNewFunc, workflowInfo } from '@temporalio/workflow';
import type { SessionConfig, SessionInput, SessionResult } from './api';
import type { Budget } from './budget';
import { WORKFLOW_ERROR_TYPES } from './errors';
import { jsonBytes } from './log-pages';
import type { SessionEvent } from './session-log';
import type { SessionState } from './session-state';

/** Temporal suggests it, or the session's own `continueAsNewAfterEvents` is reached. */
export function historyIsLong(config: SessionConfig): boolean {
  const info = workflowInfo();
  return info.continueAsNewSuggested || (config.continueAsNewAfterEvents !== undefined && info.historyLength >= config.continueAsNewAfterEvents);
}

/** Ends this run and starts the next with the log, retry policy, counts and budget carried. */
export async function continueAsNew(input: SessionInput, config: SessionConfig, events: readonly SessionEvent[], state: SessionState, budget: Budget): Promise<never> {
  const next: SessionInput = {
    ...input,
    // Keeps where the session was forked from; its events are part of the log now.
    fork: config.fork && { ...config.fork, events: [] },
    continued: { events: [...events], retryPolicy: state.retryPolicy, turnsRun: state.turnsRun, runs: (config.continued?.runs ?? 1) + 1, budget },
  };
  assertCarriable(next);
  // A versioned worker (AGENT_DEPLOYMENT_NAME) runs sessions Pinned to its version, so
  // a deploy never replays a running session on new code; here, between runs, is where
  // a session moves: the next run starts on the deployment's current version.
  // Unversioned workers ignore it.
  return makeContinueAsNewFunc<(input: SessionInput) => Promise<SessionResult>>({ initialVersioningBehavior: 'AUTO_UPGRADE' })(next);
}

/**
 * The log travels to the next run as workflow input, and Temporal refuses a payload above
 * 2 MiB (a refused continue-as-new would fail the workflow task again and again). A log that large is also several hundred thousand tokens, past every provider's
 * context window. So the session ends here, clearly, rather than growing its history
 * until Temporal terminates it at the history limit; its log stays readable and can be
 * forked from an earlier event.
 */
const MAX_CARRIED_LOG_BYTES = 1.5 * 1024 * 1024;

function assertCarriable(next: SessionInput): void {
  const bytes = jsonBytes(next);
  if (bytes <= MAX_CARRIED_LOG_BYTES) return;
  throw ApplicationFailure.create({
    type: WORKFLOW_ERROR_TYPES.tooLarge,
    message: `the session's state is ${(bytes / 1024 / 1024).toFixed(1)} MiB, more than the ${MAX_CARRIED_LOG_BYTES / 1024 / 1024} MiB one run can carry into the next; fork it from an earlier event (\`fork --at\`) to go on`,
    nonRetryable: true,
  });
}
