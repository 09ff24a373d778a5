import { z } from 'zod';
import { NON_RETRYABLE_LLM_ERROR_TYPES, SDK_PAYLOADS_TOO_LARGE } from './errors';

/**
 * The bounds any retry policy must stay within. A policy outside them is rejected at the
 * boundary (workflow input, the live Update) with a message naming the field, because a
 * bad policy is otherwise discovered at 3 a.m. as a call that retries for an hour or,
 * with a 0 ms delay, one that hammers a rate-limited provider.
 */
export const RETRY_LIMITS = {
  /** Retries after the first attempt. 10 retries = 11 attempts. */
  maxRetries: { min: 0, max: 10 },
  /** Rung 1 of the ladder. Below 100 ms Temporal's timer resolution dominates. */
  baseDelayMs: { min: 100, max: 60_000 },
  /** The cap of one wait. */
  maxDelayMs: { min: 100, max: 300_000 },
  /** Wall clock measured from the first failure. */
  budgetMs: { min: 1_000, max: 3_600_000 },
  /** A server-stated wait above this is surfaced at once instead of waited out. */
  maxServerWaitMs: { min: 0, max: 600_000 },
} as const;

const bounded = (name: keyof typeof RETRY_LIMITS) =>
  z
    .number()
    .int({ message: `${name} must be an integer` })
    .min(RETRY_LIMITS[name].min, { message: `${name} must be at least ${RETRY_LIMITS[name].min}` })
    .max(RETRY_LIMITS[name].max, { message: `${name} must be at most ${RETRY_LIMITS[name].max}` });

export const RetryPolicySchema = z
  .object({
    maxRetries: bounded('maxRetries'),
    baseDelayMs: bounded('baseDelayMs'),
    maxDelayMs: bounded('maxDelayMs'),
    budgetMs: bounded('budgetMs'),
    maxServerWaitMs: bounded('maxServerWaitMs'),
  })
  .strict()
  .refine((p) => p.maxDelayMs >= p.baseDelayMs, { message: 'maxDelayMs must be at least baseDelayMs', path: ['maxDelayMs'] });
export type RetryPolicy = z.infer<typeof RetryPolicySchema>;

/** The default ladder: 1, 2, 4, 8, 16, 30 s cap, 10 retries, 240 s from the first failure, 60 s server-wait ceiling. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  maxRetries: 10,
  baseDelayMs: 1_000,
  maxDelayMs: 30_000,
  budgetMs: 240_000,
  maxServerWaitMs: 60_000,
});

/**
 * `undefined` means the product default and `null` means the user opted out: exactly
 * one attempt, nothing else changed. The two are different on purpose.
 */
export const SessionRetryPolicySchema = RetryPolicySchema.nullable();
export type SessionRetryPolicy = RetryPolicy | null;

/** The policy a session runs with: its own, or the default ladder when it kept the default. */
export function policyInForce(policy: SessionRetryPolicy | 'default'): SessionRetryPolicy {
  return policy === 'default' ? DEFAULT_RETRY_POLICY : policy;
}

/**
 * The Temporal retry policy for one LLM call. The activity steers every retry itself
 * with `nextRetryDelay` (jitter, server-stated floors) and stops the ladder with a
 * non-retryable failure carrying its reason (retries off, count, budget, too-long waits),
 * by the session's live policy. So Temporal allows as many attempts as any policy may:
 * a policy raised while the call runs (`off` to `default`) is not capped by the one it
 * was scheduled with.
 *
 * The intervals only time the retry after a LOST attempt (worker gone, heartbeat
 * timeout), which never reaches the activity's own ladder. Temporal knows no jitter, so
 * it is given the lower half of each rung (the rung's floor under equal jitter: 0.5, 1,
 * 2, 4, 8 s, then 15 s by default) and the retried attempt waits the random upper half
 * itself before it sends anything (activities/llm/backoff.ts): a fleet of workers that
 * lost their attempts together does not come back together.
 */
export function temporalRetryPolicyFor(policy: SessionRetryPolicy) {
  const intervals = policy ?? DEFAULT_RETRY_POLICY;
  return {
    maximumAttempts: RETRY_LIMITS.maxRetries.max + 1,
    initialInterval: lowerHalf(intervals.baseDelayMs),
    backoffCoefficient: 2,
    maximumInterval: lowerHalf(intervals.maxDelayMs),
    nonRetryableErrorTypes: [...NON_RETRYABLE_LLM_ERROR_TYPES, SDK_PAYLOADS_TOO_LARGE],
  };
}

/** Whole milliseconds, rounded down: Temporal never waits longer than the jitter's floor. */
const lowerHalf = (ms: number) => Math.floor(ms / 2);
