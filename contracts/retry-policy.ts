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
 * Rung `retry` (1-based) of the ladder before jitter: `min(baseDelayMs × 2^(retry−1), maxDelayMs)`,
 * so 1, 2, 4, 8, 16, 30, 30… s by default. The one place the ladder's shape is written: the
 * activity jitters it (activities/llm/backoff.ts) and Temporal is given its floors below.
 */
export function rungMs(retry: number, policy: RetryPolicy): number {
  // 2^(retry−1) overflows to Infinity around retry 1025; min() keeps that harmless.
  return Math.min(policy.baseDelayMs * 2 ** Math.max(0, retry - 1), policy.maxDelayMs);
}

/** Whether two policies are the same rules: a change to the same values reschedules nothing. */
export function samePolicy(a: SessionRetryPolicy, b: SessionRetryPolicy): boolean {
  if (a === null || b === null) return a === b;
  return (Object.keys(RETRY_LIMITS) as (keyof RetryPolicy)[]).every((field) => a[field] === b[field]);
}

/**
 * The Temporal retry policy for one LLM call. The activity steers every retry itself
 * with `nextRetryDelay` (jitter, server-stated floors) and stops the ladder with a
 * non-retryable failure carrying its reason (retries off, count, budget, too-long waits),
 * by the policy in its input. So Temporal allows as many attempts as any policy may, and
 * the ladder's count is the activity's.
 *
 * The intervals only time the retry after a LOST attempt (worker gone, heartbeat
 * timeout), which never reaches the activity's own ladder. Temporal knows no jitter, so
 * it is given the lower half of each rung (the rung's floor under equal jitter: 0.5, 1,
 * 2, 4, 8 s, then 15 s by default) and the retried attempt waits the random upper half
 * itself before it sends anything (activities/llm/backoff.ts): a fleet of workers that
 * lost their attempts together does not come back together. A call scheduled again
 * after `attemptsSoFar` attempts (its policy changed while it was pending) starts its
 * intervals at the rung it has reached, so Temporal's n-th retry of it waits the floor of
 * the ladder's rung `attemptsSoFar + n`.
 */
export function temporalRetryPolicyFor(policy: SessionRetryPolicy, attemptsSoFar = 0) {
  const intervals = policy ?? DEFAULT_RETRY_POLICY;
  return {
    maximumAttempts: RETRY_LIMITS.maxRetries.max + 1,
    initialInterval: lowerHalf(rungMs(attemptsSoFar + 1, intervals)),
    backoffCoefficient: 2,
    maximumInterval: lowerHalf(intervals.maxDelayMs),
    nonRetryableErrorTypes: [...NON_RETRYABLE_LLM_ERROR_TYPES, SDK_PAYLOADS_TOO_LARGE],
  };
}

/** Whole milliseconds, rounded down: Temporal never waits longer than the jitter's floor. */
const lowerHalf = (ms: number) => Math.floor(ms / 2);
