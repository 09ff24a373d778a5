import { describe, expect, it } from 'vitest';
import { NON_RETRYABLE_LLM_ERROR_TYPES } from '../contracts/errors';
import { DEFAULT_RETRY_POLICY, RETRY_LIMITS, RetryPolicySchema, samePolicy, SessionRetryPolicySchema, temporalRetryPolicyFor } from '../contracts/retry-policy';

describe('the retry policy', () => {
  it('defaults to the ladder: 1 s base, 30 s cap, 10 retries, 240 s budget, 60 s server-wait ceiling', () => {
    expect(DEFAULT_RETRY_POLICY).toEqual({ maxRetries: 10, baseDelayMs: 1_000, maxDelayMs: 30_000, budgetMs: 240_000, maxServerWaitMs: 60_000 });
    expect(RetryPolicySchema.parse(DEFAULT_RETRY_POLICY)).toEqual(DEFAULT_RETRY_POLICY);
  });

  it.each(Object.entries(RETRY_LIMITS).flatMap(([field, { min, max }]) => [
    [field, min - 1, `${field} must be at least ${min}`],
    [field, max + 1, `${field} must be at most ${max}`],
  ]))('rejects %s = %d with "%s"', (field, value, message) => {
    const result = RetryPolicySchema.safeParse({ ...DEFAULT_RETRY_POLICY, [field]: value });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.message)).toContain(message);
  });

  it('rejects a cap below the base, unknown fields and fractions', () => {
    expect(RetryPolicySchema.safeParse({ ...DEFAULT_RETRY_POLICY, baseDelayMs: 5_000, maxDelayMs: 1_000 }).error?.issues[0]?.message).toBe('maxDelayMs must be at least baseDelayMs');
    expect(RetryPolicySchema.safeParse({ ...DEFAULT_RETRY_POLICY, jitter: 'full' }).success).toBe(false);
    expect(RetryPolicySchema.safeParse({ ...DEFAULT_RETRY_POLICY, maxRetries: 2.5 }).success).toBe(false);
  });

  it('lets a session opt out with null, and still gives Temporal room for every attempt a policy may allow: the activity stops the ladder', () => {
    expect(SessionRetryPolicySchema.parse(null)).toBeNull();
    expect(temporalRetryPolicyFor(null)).toEqual({ ...temporalRetryPolicyFor(DEFAULT_RETRY_POLICY), maximumAttempts: RETRY_LIMITS.maxRetries.max + 1 });
    expect(temporalRetryPolicyFor({ ...DEFAULT_RETRY_POLICY, maxRetries: 2 }).maximumAttempts).toBe(RETRY_LIMITS.maxRetries.max + 1);
  });

  it('gives Temporal 11 attempts, the lower half of each rung (its jitter floor) for a lost attempt, and every never-retried type as nonRetryableErrorTypes for the default ladder', () => {
    expect(temporalRetryPolicyFor(DEFAULT_RETRY_POLICY)).toEqual({
      maximumAttempts: 11,
      initialInterval: 500,
      backoffCoefficient: 2,
      maximumInterval: 15_000,
      nonRetryableErrorTypes: ['auth_error', 'invalid_request', 'context_overflow', 'unknown', 'quota_exceeded', 'content_blocked', 'PayloadsTooLarge'],
    });
    expect(NON_RETRYABLE_LLM_ERROR_TYPES).toHaveLength(6);
  });

  it('tells a change of rules from the same rules sent again, which reschedules no pending call', () => {
    expect(samePolicy({ ...DEFAULT_RETRY_POLICY }, DEFAULT_RETRY_POLICY)).toBe(true);
    expect(samePolicy(null, null)).toBe(true);
    expect(samePolicy(null, DEFAULT_RETRY_POLICY)).toBe(false);
    expect(samePolicy({ ...DEFAULT_RETRY_POLICY, budgetMs: 60_000 }, DEFAULT_RETRY_POLICY)).toBe(false);
  });
});
