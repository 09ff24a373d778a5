import { isFallbackLlmErrorType, TIMEOUT_ERROR_TYPES } from '../contracts/errors';
import type { FailureSummary } from '../contracts/session-log';
import { summarizeFailure } from './failure';

/**
 * An attempt whose worker was lost (it stopped heartbeating, or never closed) is as much
 * the network's failure as a dropped connection: its provider may be the one that hangs.
 */
const LOST_ATTEMPTS: ReadonlySet<string> = new Set([TIMEOUT_ERROR_TYPES.HEARTBEAT, TIMEOUT_ERROR_TYPES.START_TO_CLOSE]);

/**
 * Whether a failure of this type sends the step to the next model (docs/fallback.md): the
 * contract's FALLBACK_LLM_ERROR_TYPES, which the activity's early stop uses too, and a lost
 * attempt. The provider is overloaded, answers with a 5xx, cannot be reached, or did not answer in time. Whatever
 * the ladder's stop reason (`fallback` when the activity stopped early for it, or its
 * budget or retries spent), these say the provider, not the request, is at fault, and
 * another provider may answer the same conversation.
 *
 * Never the rest: `auth_error`, `invalid_request`, `content_blocked` and `context_overflow`
 * are the request's or the account's fault and another model would mostly refuse it too
 * (or answer a prompt the first one blocked); `quota_exceeded` is a billing matter;
 * `rate_limit` is the fleet limits' case (docs/fleet-limits.md), not an outage; `unknown`
 * is not known to be the provider's.
 */
export function takesFallback(type: string): boolean {
  return isFallbackLlmErrorType(type) || LOST_ATTEMPTS.has(type);
}

/**
 * The failure a step's LLM call ended with, when the next model takes the step over;
 * undefined when the step fails as it is. A cancel (the user's, or the turn's time limit)
 * never falls back, as it summarises as `cancelled`: the turn was stopped, the provider
 * did nothing wrong.
 */
export function fallbackFailure(error: unknown): FailureSummary | undefined {
  const failure = summarizeFailure(error);
  return takesFallback(failure.type) ? failure : undefined;
}

/** The models a session's steps may be answered by, in the order they are tried: its model, then its fallbacks. */
export function modelChain(config: { model: string; fallbacks?: readonly string[] | undefined }): readonly string[] {
  return [config.model, ...(config.fallbacks ?? [])];
}

/** Which model of the chain is in force, and since when (workflow time of the switch; 0 on the first model). */
export interface ModelInForce {
  /** Its place in the chain: a chain may name a model twice, and each place is tried once per step. */
  index: number;
  since: number;
}

/**
 * Whether a session on a fallback goes back to its first model before this step: at a
 * turn's first step, or, with `returnAfterMs`, once that long has passed since the switch
 * (then a switch outlasts its turn, and the first step of the next turn is like any other).
 */
export function returnDue(inForce: ModelInForce, step: number, returnAfterMs: number | undefined, now: number): boolean {
  if (inForce.index === 0) return false;
  return returnAfterMs === undefined ? step === 1 : now - inForce.since >= returnAfterMs;
}
