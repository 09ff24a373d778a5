import { isFallbackLlmErrorType, type RetryStopReason } from '../../contracts/errors';
import { rungMs, type RetryPolicy, type SessionRetryPolicy } from '../../contracts/retry-policy';
import type { LlmError } from './llm-error';

/**
 * The ladder's wait before retry `retry` (1-based): EQUAL JITTER on an exponential base.
 *
 *   base  = min(baseDelayMs × 2^(retry−1), maxDelayMs)     1, 2, 4, 8, 16, 30, 30… s by default
 *   delay = base/2 + random() × base/2                     somewhere in [base/2, base]
 *
 * Equal jitter rather than full jitter (`random() × base`) so a wait is never close to 0:
 * a fleet of workers that hit the same 529 spreads out, but none of them comes straight
 * back at a provider that just said it is overloaded.
 *
 * `random` is injected so tests can pin both ends of the range (0 and 1) exactly.
 */
export function backoffDelayMs(retry: number, policy: RetryPolicy, random: () => number): number {
  const base = rungMs(retry, policy);
  return base / 2 + jitterMs(retry, policy, random);
}

/**
 * The random upper half of rung `retry`: what equal jitter adds to the rung's floor. It is
 * all that is left to wait after a lost attempt, whose floor Temporal waited.
 */
function jitterMs(retry: number, policy: RetryPolicy, random: () => number): number {
  return clamp01(random()) * (rungMs(retry, policy) / 2);
}

export interface RetryInput {
  error: LlmError;
  /** `null`: the session opted out of retries. */
  policy: SessionRetryPolicy;
  /** The attempt that just failed, 1-based; retry n follows attempt n. */
  attempt: number;
  /** When the first attempt of this call failed (the budget is measured from it). */
  firstFailureAtMs: number;
  /** Time waited since then for the fleet limits (docs/fleet-limits.md): not spent of the budget. */
  limitWaitedMs?: number;
  /** Present when the call's model has a next model after it (LlmCallInput.fallbackAfterMs, docs/fallback.md). */
  fallbackAfterMs?: number;
  /** Since when this provider and model has been failing on this worker (provider-health.ts), if it is. */
  providerFailingSinceMs?: number;
  nowMs: number;
  random: () => number;
}

export type RetryDecision = { retry: true; delayMs: number } | { retry: false; reason: RetryStopReason };

/**
 * Whether the failed attempt gets another one, and after how long. Pure: the activity
 * turns `retry: false` into a non-retryable ApplicationFailure and `delayMs` into
 * `nextRetryDelay`; Temporal does the waiting.
 *
 * The checks run in this order, and the order is the rule:
 *  1. `retry_off`: the user said no; nothing else is consulted.
 *  2. `not_retryable`: a bad key or a bad request fails the same way every time.
 *  3. `retry_after_too_long`: the server asked for longer than the policy will wait.
 *     Surfaced AT ONCE, before the attempt count is looked at, with `retryAfterMs` on the
 *     failure, so the user learns "come back in 5 minutes" now rather than after the
 *     budget has been spent learning it.
 *  4. `max_retries`: attempt n failed and n > maxRetries (10 retries = 11 attempts).
 *  5. `fallback`: the call has a next model (`fallbackAfterMs`), the failure is one a
 *     fallback takes (FALLBACK_LLM_ERROR_TYPES), and the wait would END more than
 *     `fallbackAfterMs` after the model began failing: this call's first failure (as the
 *     budget counts it), or, when earlier, the first of the failures this worker has seen
 *     from the model since it last answered. So while a provider is down, a new call goes
 *     to the next model after its first failure, not after its own `fallbackAfterMs`.
 *     Before the budget: the next model is why the ladder stops short of it.
 *  6. `budget_exhausted`: the wait would END past `budgetMs` after the first failure.
 *     Judged on the end of the wait, not its start, because a retry scheduled at 239 s
 *     for 30 s would otherwise run 29 s over a budget the user was promised. Time an
 *     attempt waited for the fleet limits is not counted: the budget is for failures.
 */
export function decideRetry(input: RetryInput): RetryDecision {
  const { error, policy, attempt, nowMs, random } = input;
  if (policy === null) return { retry: false, reason: 'retry_off' };
  if (!error.retryable) return { retry: false, reason: 'not_retryable' };
  const serverWaitMs = error.retryAfterMs;
  if (serverWaitMs !== undefined && serverWaitMs > policy.maxServerWaitMs) return { retry: false, reason: 'retry_after_too_long' };
  if (attempt > policy.maxRetries) return { retry: false, reason: 'max_retries' };

  // The server's wait is a FLOOR: it raises the jittered delay and never lowers it.
  // Whole milliseconds, rounded up so the floor is never undercut by rounding, and at
  // least 1 ms because Temporal does not read a `nextRetryDelay` of 0 as "retry now" (a
  // zero duration is indistinguishable from an unset one on the wire).
  const delayMs = Math.max(1, Math.ceil(Math.max(backoffDelayMs(attempt, policy, random), serverWaitMs ?? 0)));
  if (isFallbackLlmErrorType(error.type) && fallbackDue(input, nowMs + delayMs)) return { retry: false, reason: 'fallback' };
  if (nowMs + delayMs - budgetStartMs(input) > policy.budgetMs) return { retry: false, reason: 'budget_exhausted' };
  return { retry: true, delayMs };
}

/**
 * Whether a retry at `retryAtMs` would come more than `fallbackAfterMs` after the model
 * began failing (rule 5 of `decideRetry`); never without `fallbackAfterMs`.
 */
function fallbackDue(input: { fallbackAfterMs?: number; providerFailingSinceMs?: number; firstFailureAtMs: number; limitWaitedMs?: number }, retryAtMs: number): boolean {
  if (input.fallbackAfterMs === undefined) return false;
  const failingSinceMs = Math.min(budgetStartMs(input), input.providerFailingSinceMs ?? Number.POSITIVE_INFINITY);
  return retryAtMs - failingSinceMs > input.fallbackAfterMs;
}

/** A random source that strays outside [0, 1] must not produce a negative or doubled wait. */
function clamp01(x: number): number {
  if (!Number.isFinite(x) || x < 0) return 0;
  return x > 1 ? 1 : x;
}

export interface AdmissionInput {
  /** The policy the call was scheduled with. */
  policy: SessionRetryPolicy;
  /** The attempt about to run, 1-based and counted across the call's schedules: retry `attempt − 1`. */
  attempt: number;
  firstFailureAtMs: number;
  /** Time waited since the first failure for the fleet limits: not spent of the budget. */
  limitWaitedMs?: number;
  /** As `decideRetry` takes them: a lost attempt is a network failure, which a fallback takes. */
  fallbackAfterMs?: number;
  providerFailingSinceMs?: number;
  nowMs: number;
  random: () => number;
}

export type AdmissionDecision = { admit: true; waitMs: number } | { admit: false; reason: RetryStopReason };

/**
 * Whether an attempt may run after its predecessor was lost without reaching the
 * activity's own failure path (its worker died, or it went silent past the heartbeat
 * timeout), and how much longer it must wait first. Temporal scheduled this retry on its
 * own fallback policy, so the ladder's rules are applied here, before any request goes
 * out: the policy, the retry count, and the budget measured from the first failure.
 *
 * Temporal cannot jitter, so it was given the rung's floor (`temporalRetryPolicyFor`) and
 * waited that; `waitMs` is the rung's random upper half, so the retry follows the same
 * equal jitter as one after an ordinary failure, and no formula of Temporal's is written
 * twice. The budget, and the fallback's time before it, are judged on the end of that
 * wait, as `decideRetry` does.
 */
export function admitAfterLostAttempt(input: AdmissionInput): AdmissionDecision {
  const { policy, attempt, nowMs, random } = input;
  if (policy === null) return { admit: false, reason: 'retry_off' };
  const retry = attempt - 1;
  if (retry > policy.maxRetries) return { admit: false, reason: 'max_retries' };
  const waitMs = Math.ceil(jitterMs(retry, policy, random));
  if (fallbackDue(input, nowMs + waitMs)) return { admit: false, reason: 'fallback' };
  if (nowMs + waitMs - budgetStartMs(input) > policy.budgetMs) return { admit: false, reason: 'budget_exhausted' };
  return { admit: true, waitMs };
}

/**
 * Where the budget's clock starts: the first failure, moved on by the time waited for the
 * fleet limits since, so a call held by the account's limits keeps its whole budget for
 * failures.
 */
function budgetStartMs(input: { firstFailureAtMs: number; limitWaitedMs?: number }): number {
  return input.firstFailureAtMs + (input.limitWaitedMs ?? 0);
}
