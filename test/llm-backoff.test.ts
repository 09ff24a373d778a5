import { describe, expect, it } from 'vitest';
import { admitAfterLostAttempt, backoffDelayMs, decideRetry, type AdmissionInput, type RetryInput } from '../activities/llm/backoff';
import { LlmError } from '../activities/llm/llm-error';
import type { LlmErrorType } from '../contracts/errors';
import { DEFAULT_RETRY_POLICY, RetryPolicySchema, temporalRetryPolicyFor, type RetryPolicy } from '../contracts/retry-policy';

const policy = DEFAULT_RETRY_POLICY;
const fixed = (x: number) => () => x;

function failure(type: LlmErrorType, retryAfterMs?: number): LlmError {
  return new LlmError({ type, provider: 'anthropic', detail: 'test', ...(retryAfterMs !== undefined && { retryAfterMs }) });
}

function decide(over: Partial<RetryInput> = {}) {
  return decideRetry({
    error: failure('overloaded'),
    policy,
    attempt: 1,
    firstFailureAtMs: 1_000_000,
    nowMs: 1_000_000,
    random: fixed(0.5),
    ...over,
  });
}

describe('backoffDelayMs: the ladder with equal jitter', () => {
  // base = min(1 s × 2^(n−1), 30 s): 1, 2, 4, 8, 16, 30, 30, 30, 30, 30 s
  const bases = [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000, 30_000, 30_000];

  it.each(bases.map((base, i) => ({ retry: i + 1, base })))('retry $retry waits between base/2 and base ($base ms)', ({ retry, base }) => {
    expect(backoffDelayMs(retry, policy, fixed(0))).toBe(base / 2);
    expect(backoffDelayMs(retry, policy, fixed(1))).toBe(base);
    expect(backoffDelayMs(retry, policy, fixed(0.5))).toBe(base * 0.75);
  });

  it('caps every wait at maxDelayMs, however far up the ladder', () => {
    expect(backoffDelayMs(6, policy, fixed(1))).toBe(30_000);
    expect(backoffDelayMs(50, policy, fixed(1))).toBe(30_000);
    expect(backoffDelayMs(5_000, policy, fixed(1))).toBe(30_000);
  });

  it('follows a custom policy', () => {
    const p: RetryPolicy = { ...policy, baseDelayMs: 200, maxDelayMs: 1_000 };
    expect([1, 2, 3, 4, 5].map((n) => backoffDelayMs(n, p, fixed(1)))).toEqual([200, 400, 800, 1_000, 1_000]);
  });

  it('keeps a misbehaving random source inside [base/2, base]', () => {
    expect(backoffDelayMs(1, policy, fixed(-3))).toBe(500);
    expect(backoffDelayMs(1, policy, fixed(7))).toBe(1_000);
    expect(backoffDelayMs(1, policy, fixed(Number.NaN))).toBe(500);
  });

  it('stays inside the range for any random value', () => {
    for (let i = 0; i < 1_000; i++) {
      const d = backoffDelayMs(3, policy, Math.random);
      expect(d).toBeGreaterThanOrEqual(2_000);
      expect(d).toBeLessThanOrEqual(4_000);
    }
  });
});

describe('decideRetry', () => {
  it('schedules a retryable failure with the jittered delay of its rung', () => {
    expect(decide({ attempt: 1, random: fixed(0) })).toEqual({ retry: true, delayMs: 500 });
    expect(decide({ attempt: 3, random: fixed(1) })).toEqual({ retry: true, delayMs: 4_000 });
  });

  it('never retries when the session turned retries off, even a retryable failure', () => {
    expect(decide({ policy: null })).toEqual({ retry: false, reason: 'retry_off' });
  });

  it.each(['auth_error', 'invalid_request', 'context_overflow', 'unknown', 'quota_exceeded', 'content_blocked'] as const)('never retries %s', (type) => {
    expect(decide({ error: failure(type) })).toEqual({ retry: false, reason: 'not_retryable' });
  });

  it.each(['timeout', 'rate_limit', 'overloaded', 'server_error', 'network_error'] as const)('retries %s', (type) => {
    expect(decide({ error: failure(type) })).toMatchObject({ retry: true });
  });

  describe('attempts', () => {
    it('allows 10 retries: attempt 10 failing still gets retry 10', () => {
      expect(decide({ attempt: 10, random: fixed(0) })).toEqual({ retry: true, delayMs: 15_000 });
    });

    it('stops after attempt 11 (10 retries = 11 attempts)', () => {
      expect(decide({ attempt: 11 })).toEqual({ retry: false, reason: 'max_retries' });
    });

    it('with maxRetries 0 the first failure is final', () => {
      expect(decide({ policy: { ...policy, maxRetries: 0 }, attempt: 1 })).toEqual({ retry: false, reason: 'max_retries' });
    });
  });

  describe('server-stated waits', () => {
    it('raise the delay to at least the stated wait', () => {
      // Rung 1 is at most 1 s; the server asked for 3 s.
      expect(decide({ error: failure('rate_limit', 3_000), attempt: 1, random: fixed(1) })).toEqual({ retry: true, delayMs: 3_000 });
    });

    it('never lower the delay: a short stated wait leaves the ladder alone', () => {
      // Rung 4 is 4..8 s; the server asked for 0.5 s.
      expect(decide({ error: failure('rate_limit', 500), attempt: 4, random: fixed(0) })).toEqual({ retry: true, delayMs: 4_000 });
    });

    it('up to maxServerWaitMs (60 s) are waited out', () => {
      expect(decide({ error: failure('rate_limit', 60_000) })).toEqual({ retry: true, delayMs: 60_000 });
    });

    it('above maxServerWaitMs are surfaced at once, not waited out', () => {
      expect(decide({ error: failure('rate_limit', 60_001) })).toEqual({ retry: false, reason: 'retry_after_too_long' });
      expect(decide({ error: failure('rate_limit', 120_000), attempt: 1 })).toEqual({ retry: false, reason: 'retry_after_too_long' });
    });

    it('above the ceiling are reported as too long even when the attempts are also used up', () => {
      expect(decide({ error: failure('rate_limit', 120_000), attempt: 11 })).toEqual({ retry: false, reason: 'retry_after_too_long' });
    });

    it('follow a policy with a lower ceiling', () => {
      const p = { ...policy, maxServerWaitMs: 5_000 };
      expect(decide({ policy: p, error: failure('rate_limit', 5_001) })).toEqual({ retry: false, reason: 'retry_after_too_long' });
    });
  });

  describe('budget (240 s from the first failure)', () => {
    const first = 1_000_000;

    it('schedules a retry whose wait ends exactly at the budget', () => {
      // random 0 on rung 1: 500 ms; 239.5 s + 0.5 s = 240 s.
      expect(decide({ firstFailureAtMs: first, nowMs: first + 239_500, random: fixed(0) })).toEqual({ retry: true, delayMs: 500 });
    });

    it('refuses a retry whose wait would end 1 ms past the budget', () => {
      expect(decide({ firstFailureAtMs: first, nowMs: first + 239_501, random: fixed(0) })).toEqual({ retry: false, reason: 'budget_exhausted' });
    });

    it('counts the server-stated floor against the budget', () => {
      // 200 s in, the server asks for 45 s: 245 s > 240 s.
      expect(decide({ error: failure('rate_limit', 45_000), firstFailureAtMs: first, nowMs: first + 200_000 })).toEqual({
        retry: false,
        reason: 'budget_exhausted',
      });
    });

    it('fits all ten retries even at the longest jitter (1+2+4+8+16+30×5 = 181 s)', () => {
      let now = first;
      for (let attempt = 1; attempt <= 10; attempt++) {
        const d = decide({ attempt, firstFailureAtMs: first, nowMs: now, random: fixed(1) });
        expect(d.retry).toBe(true);
        if (d.retry) now += d.delayMs;
      }
      expect(now - first).toBe(181_000);
      expect(decide({ attempt: 11, firstFailureAtMs: first, nowMs: now })).toEqual({ retry: false, reason: 'max_retries' });
    });

    it('stops a ladder of 30 s server waits before its tenth retry', () => {
      let now = first;
      let retries = 0;
      for (let attempt = 1; attempt <= 11; attempt++) {
        const d = decide({ error: failure('rate_limit', 30_000), attempt, firstFailureAtMs: first, nowMs: now, random: fixed(0) });
        if (!d.retry) {
          expect(d.reason).toBe('budget_exhausted');
          break;
        }
        now += d.delayMs;
        retries++;
      }
      expect(retries).toBe(8); // 8 × 30 s = 240 s; a 9th would end at 270 s
    });
  });

  describe('the fallback stop (a call whose model has a next model: fallbackAfterMs)', () => {
    const first = 1_000_000;
    const withFallback = (over: Partial<RetryInput> = {}) => decide({ fallbackAfterMs: 30_000, firstFailureAtMs: first, random: fixed(0), ...over });

    it.each(['overloaded', 'server_error', 'network_error', 'timeout'] as const)('stops %s with reason fallback once the retry would end past fallbackAfterMs since the first failure', (type) => {
      // Rung 1 at jitter 0 waits 500 ms: 29.5 s + 0.5 s ends at 30 s, 1 ms more is past it.
      expect(withFallback({ error: failure(type), nowMs: first + 29_500 })).toEqual({ retry: true, delayMs: 500 });
      expect(withFallback({ error: failure(type), nowMs: first + 29_501 })).toEqual({ retry: false, reason: 'fallback' });
    });

    it('never stops rate_limit early: waiting for the account is the fleet limits\' case', () => {
      expect(withFallback({ error: failure('rate_limit'), nowMs: first + 100_000 })).toEqual({ retry: true, delayMs: 500 });
    });

    it('leaves a non-retryable failure not_retryable: no fallback for auth_error, invalid_request or a content block', () => {
      for (const type of ['auth_error', 'invalid_request', 'content_blocked'] as const) {
        expect(withFallback({ error: failure(type), nowMs: first + 100_000 })).toEqual({ retry: false, reason: 'not_retryable' });
      }
    });

    it('changes nothing without fallbackAfterMs: the same failure 100 s in is retried by the ladder', () => {
      expect(decide({ firstFailureAtMs: first, nowMs: first + 100_000, random: fixed(0) })).toEqual({ retry: true, delayMs: 500 });
      expect(decide({ firstFailureAtMs: first, nowMs: first + 100_000, random: fixed(0), providerFailingSinceMs: first - 600_000 })).toEqual({ retry: true, delayMs: 500 });
    });

    it('counts from when the worker saw the model begin failing: a new call stops at its first failure while the provider is down', () => {
      // This call failed for the first time just now; the model has been failing on this worker for 10 minutes.
      expect(withFallback({ attempt: 1, nowMs: first, providerFailingSinceMs: first - 600_000 })).toEqual({ retry: false, reason: 'fallback' });
      // Failing for 20 s on the worker: the retry's wait still ends within 30 s.
      expect(withFallback({ attempt: 1, nowMs: first, providerFailingSinceMs: first - 20_000 })).toEqual({ retry: true, delayMs: 500 });
    });

    it('does not count time waited for the fleet limits, as the budget does not', () => {
      expect(withFallback({ nowMs: first + 39_500, limitWaitedMs: 10_000 })).toEqual({ retry: true, delayMs: 500 });
      expect(withFallback({ nowMs: first + 39_501, limitWaitedMs: 10_000 })).toEqual({ retry: false, reason: 'fallback' });
    });

    it('judges a server-stated wait on its end: an overloaded provider asking for 45 s goes to the next model at once', () => {
      expect(withFallback({ error: failure('overloaded', 45_000), nowMs: first })).toEqual({ retry: false, reason: 'fallback' });
    });

    it('comes before the budget, after retries off and the retry count', () => {
      expect(withFallback({ nowMs: first + 300_000 })).toEqual({ retry: false, reason: 'fallback' });
      expect(withFallback({ policy: null, nowMs: first + 300_000 })).toEqual({ retry: false, reason: 'retry_off' });
      expect(withFallback({ attempt: 11, nowMs: first + 300_000 })).toEqual({ retry: false, reason: 'max_retries' });
    });
  });

  describe('the delay is never 0 (Temporal does not read 0 as "retry now")', () => {
    it('is at least 1 ms even for a policy that would compute 0', () => {
      // Below RETRY_LIMITS on purpose: the decision must hold even if validation is bypassed.
      const degenerate = { ...policy, baseDelayMs: 0, maxDelayMs: 0 };
      expect(decide({ policy: degenerate, random: fixed(0) })).toEqual({ retry: true, delayMs: 1 });
      expect(decide({ policy: degenerate, error: failure('rate_limit', 0) })).toEqual({ retry: true, delayMs: 1 });
    });

    it('is a whole number of ms, rounded up so a stated floor is never undercut', () => {
      const d = decide({ error: failure('rate_limit', 2_000.2), random: fixed(0) });
      expect(d).toEqual({ retry: true, delayMs: 2_001 });
      const odd = RetryPolicySchema.parse({ ...policy, baseDelayMs: 101 });
      expect(decide({ policy: odd, random: fixed(0) })).toEqual({ retry: true, delayMs: 51 });
    });

    it('for the smallest valid policy at the bottom of the jitter is still positive', () => {
      const smallest = RetryPolicySchema.parse({ maxRetries: 1, baseDelayMs: 100, maxDelayMs: 100, budgetMs: 1_000, maxServerWaitMs: 0 });
      expect(decide({ policy: smallest, random: fixed(0) })).toEqual({ retry: true, delayMs: 50 });
    });
  });
});

/**
 * What Temporal waits before its retry `retry` of an activity with this retry policy, by the
 * formula Temporal documents: the test states it, the product only hands Temporal the floors.
 */
function temporalWaitMs(retry: number, policy: RetryPolicy, attemptsSoFar = 0): number {
  const { initialInterval, backoffCoefficient, maximumInterval } = temporalRetryPolicyFor(policy, attemptsSoFar);
  return Math.min(initialInterval * backoffCoefficient ** (retry - 1), maximumInterval);
}

describe('a retry after a lost attempt (Temporal waited the rung\'s floor, all it can express of equal jitter)', () => {
  const admit = (over: Partial<AdmissionInput> = {}) => admitAfterLostAttempt({ policy, attempt: 2, firstFailureAtMs: 1_000_000, nowMs: 1_000_000, random: fixed(0.5), ...over });

  it('Temporal waits the lower half of each rung of the default ladder: 0.5, 1, 2, 4, 8 s, then 15 s', () => {
    expect(Array.from({ length: 10 }, (_, i) => temporalWaitMs(i + 1, policy))).toEqual([500, 1_000, 2_000, 4_000, 8_000, 15_000, 15_000, 15_000, 15_000, 15_000]);
  });

  it('waits the random upper half itself, so floor plus wait is the jittered delay of an ordinary retry', () => {
    for (const [retry, r] of [[1, 0], [1, 0.5], [1, 1], [3, 0.25], [6, 0.9], [10, 1]] as const) {
      const admission = admit({ attempt: retry + 1, random: fixed(r) });
      expect(admission.admit && temporalWaitMs(retry, policy) + admission.waitMs).toBe(Math.ceil(backoffDelayMs(retry, policy, fixed(r))));
    }
    expect(admit({ attempt: 7, random: fixed(1) })).toEqual({ admit: true, waitMs: 15_000 });
    expect(admit({ attempt: 7, random: fixed(0) })).toEqual({ admit: true, waitMs: 0 });
  });

  it('keeps to the ladder\'s rung in a call scheduled again after 3 attempts: Temporal starts its floors at rung 4', () => {
    // Temporal's first retry of the new schedule is the call's retry 4: 4 s floor, 8 s rung.
    expect([1, 2, 3].map((retry) => temporalWaitMs(retry, policy, 3))).toEqual([4_000, 8_000, 15_000]);
    const admission = admit({ attempt: 3 + 2, random: fixed(1) });
    expect(admission.admit && temporalWaitMs(1, policy, 3) + admission.waitMs).toBe(backoffDelayMs(4, policy, fixed(1)));
  });

  it('stops by the policy before any wait: retries off, the retry count, the budget judged at the end of the wait', () => {
    expect(admit({ policy: null })).toEqual({ admit: false, reason: 'retry_off' });
    expect(admit({ attempt: 12 })).toEqual({ admit: false, reason: 'max_retries' });
    expect(admit({ attempt: 11 }).admit).toBe(true);
    // Retry 6 at jitter 1 waits 15 s more: 225 s after the first failure ends at the budget, 1 ms more is past it.
    expect(admit({ attempt: 7, random: fixed(1), nowMs: 1_000_000 + 225_000 })).toEqual({ admit: true, waitMs: 15_000 });
    expect(admit({ attempt: 7, random: fixed(1), nowMs: 1_000_000 + 225_001 })).toEqual({ admit: false, reason: 'budget_exhausted' });
  });

  it('stops with reason fallback when the call has a next model and the wait would end past fallbackAfterMs: a lost attempt is a network failure', () => {
    // Retry 1 at jitter 1 waits 500 ms more: 29.5 s after the first failure ends at 30 s.
    expect(admit({ fallbackAfterMs: 30_000, random: fixed(1), nowMs: 1_000_000 + 29_500 })).toEqual({ admit: true, waitMs: 500 });
    expect(admit({ fallbackAfterMs: 30_000, random: fixed(1), nowMs: 1_000_000 + 29_501 })).toEqual({ admit: false, reason: 'fallback' });
    expect(admit({ fallbackAfterMs: 30_000, providerFailingSinceMs: 1_000_000 - 60_000 })).toEqual({ admit: false, reason: 'fallback' });
    expect(admit({ random: fixed(1), nowMs: 1_000_000 + 29_501 })).toEqual({ admit: true, waitMs: 500 });
  });
});
