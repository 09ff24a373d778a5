import { describe, expect, it } from 'vitest';
import { PROVIDER_HEALTH_FRESH_MS, ProviderHealth } from '../activities/llm/provider-health';
import { decideRetry } from '../activities/llm/backoff';
import { LlmError } from '../activities/llm/llm-error';
import { DEFAULT_RETRY_POLICY } from '../contracts/retry-policy';

const MODEL = 'anthropic:claude-sonnet-4-5';
const T0 = 1_000_000;

describe("provider health: since when a model has been failing on this worker", () => {
  it('knows nothing of a model that has not failed', () => {
    expect(new ProviderHealth().failingSinceMs(MODEL, T0)).toBeUndefined();
  });

  it('dates a streak from its first failure a fallback takes, across calls', () => {
    const health = new ProviderHealth();
    health.failed(MODEL, 'overloaded', T0);
    health.failed(MODEL, 'server_error', T0 + 20_000);
    health.failed(MODEL, 'network_error', T0 + 40_000);
    health.failed(MODEL, 'timeout', T0 + 60_000);
    expect(health.failingSinceMs(MODEL, T0 + 60_000)).toBe(T0);
  });

  it('keeps each provider:model apart', () => {
    const health = new ProviderHealth();
    health.failed(MODEL, 'overloaded', T0);
    expect(health.failingSinceMs('anthropic:claude-haiku-4-5', T0)).toBeUndefined();
    expect(health.failingSinceMs('openai:gpt-5', T0)).toBeUndefined();
  });

  it.each(['rate_limit', 'auth_error', 'invalid_request', 'content_blocked', 'quota_exceeded', 'context_overflow', 'unknown'])('does not count %s: no fallback takes it', (type) => {
    const health = new ProviderHealth();
    health.failed(MODEL, type, T0);
    expect(health.failingSinceMs(MODEL, T0)).toBeUndefined();
  });

  it('is cleared by an answer from the model: the next failure starts a new streak', () => {
    const health = new ProviderHealth();
    health.failed(MODEL, 'overloaded', T0);
    health.answered(MODEL);
    expect(health.failingSinceMs(MODEL, T0 + 1)).toBeUndefined();
    health.failed(MODEL, 'overloaded', T0 + 90_000);
    expect(health.failingSinceMs(MODEL, T0 + 90_000)).toBe(T0 + 90_000);
  });

  it('forgets a streak nobody renewed for PROVIDER_HEALTH_FRESH_MS: the model is no longer known to be down', () => {
    const health = new ProviderHealth();
    health.failed(MODEL, 'overloaded', T0);
    expect(health.failingSinceMs(MODEL, T0 + PROVIDER_HEALTH_FRESH_MS)).toBe(T0);
    expect(health.failingSinceMs(MODEL, T0 + PROVIDER_HEALTH_FRESH_MS + 1)).toBeUndefined();
    health.failed(MODEL, 'overloaded', T0 + PROVIDER_HEALTH_FRESH_MS + 1);
    expect(health.failingSinceMs(MODEL, T0 + PROVIDER_HEALTH_FRESH_MS + 1)).toBe(T0 + PROVIDER_HEALTH_FRESH_MS + 1);
  });

  it('a failure renews the streak: failures a minute apart for ten minutes are one streak', () => {
    const health = new ProviderHealth(90_000);
    for (let t = T0; t <= T0 + 600_000; t += 60_000) health.failed(MODEL, 'server_error', t);
    expect(health.failingSinceMs(MODEL, T0 + 600_000)).toBe(T0);
  });

  it('takes failures reported out of order: the streak spans them all', () => {
    const health = new ProviderHealth();
    health.failed(MODEL, 'overloaded', T0 + 5_000);
    health.failed(MODEL, 'overloaded', T0);
    expect(health.failingSinceMs(MODEL, T0 + 5_000)).toBe(T0);
  });
});

describe('provider health and the ladder: while a provider is down, each new call switches after its first failure', () => {
  it('a call that fails once, ten minutes into an outage the worker has seen, stops with reason fallback; after the model answers, the same failure is retried', () => {
    const health = new ProviderHealth();
    for (let t = T0; t <= T0 + 600_000; t += 30_000) health.failed(MODEL, 'overloaded', t);
    const now = T0 + 600_000;
    const error = new LlmError({ type: 'overloaded', provider: 'anthropic', detail: 'test' });
    const decide = (since: number | undefined) =>
      decideRetry({ error, policy: DEFAULT_RETRY_POLICY, attempt: 1, firstFailureAtMs: now, nowMs: now, random: () => 0, fallbackAfterMs: 30_000, ...(since === undefined ? {} : { providerFailingSinceMs: since }) });
    expect(decide(health.failingSinceMs(MODEL, now))).toEqual({ retry: false, reason: 'fallback' });
    health.answered(MODEL);
    expect(decide(health.failingSinceMs(MODEL, now))).toEqual({ retry: true, delayMs: 500 });
  });
});
