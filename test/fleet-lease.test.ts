import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { decideRetry } from '../activities/llm/backoff';
import { estimatedInputTokens, FIRST_ANSWER_TIMEOUT_MS, FleetLease, type FleetLeaseCall } from '../activities/llm/fleet-lease';
import { LiveCall } from '../activities/llm/live-call';
import { LlmError } from '../activities/llm/llm-error';
import type { LlmCallInput } from '../contracts/llm-call';
import type { LiveFrame, LiveStreamPublisher } from '../contracts/live-stream';
import { observedLimits } from '../activities/llm/rate-limit-headers';
import { FleetLimitSchema, FleetLimitsFileSchema } from '../contracts/fleet-limits';
import { DEFAULT_RETRY_POLICY } from '../contracts/retry-policy';
import { ConfigError } from '../config/config-error';
import { loadFleetLimits } from '../config/fleet-limits-file';
import { readWorkerFiles } from '../worker/config-files';

/** The LLM activity's side of the fleet limits, without a server: which calls ask, what the headers teach, what the budget counts. */

const NOW = Date.UTC(2026, 11, 2, 12, 0, 0);

function call(provider: FleetLeaseCall['provider'], model: string): FleetLeaseCall {
  return { client: {} as Client, taskQueue: 'q', holder: 'wf/run/1', attempt: 1, provider, model, priority: 'interactive', signal: new AbortController().signal, onWait: () => {}, onGranted: () => {}, warn: () => {} };
}

describe('which calls ask the limiter', () => {
  const limits = FleetLimitsFileSchema.parse({ limits: [{ provider: 'anthropic', inputTokensPerMinute: 40_000 }, { provider: 'openai', model: 'gpt-5', concurrentCalls: 4 }] }).limits;

  it('asks for a call its provider\'s entry or its model\'s entry holds, and for no other', () => {
    expect(FleetLease.of(limits, call('anthropic', 'claude-sonnet-4-5'))).toBeInstanceOf(FleetLease);
    expect(FleetLease.of(limits, call('openai', 'gpt-5'))).toBeInstanceOf(FleetLease);
    expect(FleetLease.of(limits, call('openai', 'gpt-4.1'))).toBeUndefined();
    expect(FleetLease.of(limits, call('google', 'gemini-2.5-pro'))).toBeUndefined();
    expect(FleetLease.of([], call('anthropic', 'claude-sonnet-4-5'))).toBeUndefined();
  });

  it('fails a call whose first ask no worker answers, saying the task queue\'s workers must run agentLimiter', async () => {
    vi.useFakeTimers();
    try {
      // No worker runs the limiter: the Update is never answered.
      const unanswered = { withAbortSignal: (_signal: AbortSignal, fn: () => unknown) => fn(), workflow: { executeUpdateWithStart: () => new Promise(() => {}) } } as unknown as Client;
      const lease = FleetLease.of(limits, { ...call('anthropic', 'claude-sonnet-4-5'), client: unanswered })!;
      const failed = expect(lease.acquire('{}', 100)).rejects.toThrow(/^the fleet limiter agent-limiter:anthropic:q did not answer in 30 s: the task queue's workers must run the agentLimiter workflow/);
      await vi.advanceTimersByTimeAsync(FIRST_ANSWER_TIMEOUT_MS);
      await failed;
    } finally {
      vi.useRealTimers();
    }
    // Milliseconds on fake timers; a lease that waits for ever fails here in 10 s, not the suite's 60.
  }, 10_000);

  it('asks again after a short pause when Temporal refuses the ask for the limiter\'s load, rather than fail the call', async () => {
    const answers: Array<() => Promise<unknown>> = [
      () => Promise.reject(Object.assign(new Error('limit on number of concurrent in-flight updates has been reached (10)'), { code: 8 })),
      () => Promise.resolve({ granted: true, lease: 'wf/run/1#1' }),
    ];
    const busy = { withAbortSignal: (_signal: AbortSignal, fn: () => unknown) => fn(), workflow: { executeUpdateWithStart: () => answers.shift()!() } } as unknown as Client;
    const waits: number[] = [];
    const lease = FleetLease.of(limits, { ...call('anthropic', 'claude-sonnet-4-5'), client: busy, onGranted: (waited) => void waits.push(waited) })!;
    await lease.acquire('{}', 100);
    expect(answers).toEqual([]);
    expect(waits).toEqual([0]);
  });

  it('estimates a request\'s input as the scripted LLM and the context window do: one token per four characters of its body', () => {
    expect(estimatedInputTokens('x'.repeat(4_001))).toBe(1_001);
    expect(estimatedInputTokens('')).toBe(1);
  });

  it('refuses a second limit for the same provider or model, naming it', () => {
    const twice = FleetLimitsFileSchema.safeParse({ limits: [{ provider: 'openai', model: 'gpt-5' }, { provider: 'openai', model: 'gpt-5', concurrentCalls: 1 }] });
    expect(twice.success).toBe(false);
    expect(twice.error?.issues[0]).toMatchObject({ path: ['limits', 1], message: 'a second limit for openai:gpt-5' });
    expect(FleetLimitSchema.safeParse({ provider: 'anthropic', windowSeconds: 0 }).error?.issues[0]?.message).toBe('must be a whole number of seconds from 1 to 60');
  });
});

describe('what the provider\'s rate-limit headers teach the limiter', () => {
  it('reads Anthropic\'s requests, input and output token buckets with their RFC 3339 resets', () => {
    const reset = new Date(NOW + 8_000).toISOString();
    const headers = {
      'anthropic-ratelimit-requests-limit': '50',
      'anthropic-ratelimit-requests-remaining': '49',
      'anthropic-ratelimit-requests-reset': reset,
      'anthropic-ratelimit-input-tokens-limit': '40000',
      'anthropic-ratelimit-input-tokens-remaining': '1200',
      'anthropic-ratelimit-input-tokens-reset': reset,
      'anthropic-ratelimit-output-tokens-limit': '8000',
      'anthropic-ratelimit-output-tokens-remaining': 'not a number',
    };
    expect(observedLimits(headers, NOW)).toEqual({
      requests: { limit: 50, remaining: 49, resetAt: NOW + 8_000 },
      inputTokens: { limit: 40_000, remaining: 1_200, resetAt: NOW + 8_000 },
      outputTokens: { limit: 8_000 },
    });
  });

  it('reads OpenAI\'s requests and its one token bucket, as input, with Go-duration resets', () => {
    const headers = { 'x-ratelimit-limit-requests': '500', 'x-ratelimit-remaining-requests': '499', 'x-ratelimit-reset-requests': '120ms', 'x-ratelimit-limit-tokens': '30000', 'x-ratelimit-remaining-tokens': '0', 'x-ratelimit-reset-tokens': '6m0s' };
    expect(observedLimits(headers, NOW)).toEqual({ requests: { limit: 500, remaining: 499, resetAt: NOW + 120 }, inputTokens: { limit: 30_000, remaining: 0, resetAt: NOW + 360_000 } });
  });

  it('learns nothing from a response without them (Gemini sends none)', () => {
    expect(observedLimits({ 'content-type': 'text/event-stream' }, NOW)).toBeUndefined();
  });
});

describe('a waiting call on the live stream', () => {
  it('publishes the llm_waiting state with watch\'s line', () => {
    const frames: LiveFrame[] = [];
    const publisher: LiveStreamPublisher = { publish: (frame) => void frames.push(frame), close: async () => {} };
    const input = { sessionId: 's', turn: 2, step: 3, model: 'anthropic:claude', uptoSeq: 0, retryPolicy: DEFAULT_RETRY_POLICY } as LlmCallInput;
    LiveCall.of(publisher, input, 1)!.waiting({ reason: 'input_tokens', provider: 'anthropic', model: 'claude', etaMs: 8_000, since: Date.now() });
    expect(frames).toEqual([expect.objectContaining({ kind: 'progress', sessionId: 's', turn: 2, step: 3, state: 'llm_waiting', line: 'waiting for the anthropic token budget, ~8 s' })]);
  });
});

describe('the ladder\'s budget beside the fleet limits', () => {
  const decide = (limitWaitedMs?: number) =>
    decideRetry({ error: new LlmError({ type: 'overloaded', provider: 'anthropic', detail: 'test' }), policy: DEFAULT_RETRY_POLICY, attempt: 3, firstFailureAtMs: NOW, nowMs: NOW + 238_000, random: () => 0.5, ...(limitWaitedMs === undefined ? {} : { limitWaitedMs }) });

  it('does not count the time a call waited for the limits against its 240 s budget', () => {
    expect(decide()).toEqual({ retry: false, reason: 'budget_exhausted' });
    expect(decide(30_000)).toMatchObject({ retry: true });
  });
});

describe('AGENT_LIMITS_FILE', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'limits-file-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string) => {
    const where = path.join(dir, name);
    writeFileSync(where, text);
    return where;
  };

  it('takes the example of docs/fleet-limits.md as written', () => {
    const docs = readFileSync(path.join(import.meta.dirname, '..', 'docs', 'fleet-limits.md'), 'utf8');
    const example = /```json\n([^]*?)```/.exec(docs)?.[1];
    expect(example).toBeDefined();
    const limits = loadFleetLimits(file('docs.json', example!));
    expect(limits.map((l) => `${l.provider}:${l.model ?? '*'}:${l.windowSeconds}:${l.learn}`)).toEqual(['anthropic:*:60:true', 'anthropic:claude-opus-4-1:60:true', 'openai:*:10:false']);
  });

  it('is read by the worker with the defaults filled in, and unset means no limits', () => {
    const where = file('ok.json', JSON.stringify({ limits: [{ provider: 'anthropic', model: 'claude-sonnet-4-5', inputTokensPerMinute: 40_000 }] }));
    expect(readWorkerFiles({ AGENT_LIMITS_FILE: where }, {}).limits).toEqual([{ provider: 'anthropic', model: 'claude-sonnet-4-5', inputTokensPerMinute: 40_000, windowSeconds: 60, learn: true, outputReserve: 4_096 }]);
    expect(readWorkerFiles({}, {}).limits).toEqual([]);
  });

  it('refuses a bad file in one line that names the setting and the field, never its text', () => {
    expect(() => loadFleetLimits(file('bad.json', JSON.stringify({ limits: [{ provider: 'anthropic', inputTokensPerMinute: -5 }] })))).toThrow(/^AGENT_LIMITS_FILE: limits\.0\.inputTokensPerMinute: must be a positive number of tokens \(expected \{"limits"/);
    expect(() => loadFleetLimits(file('typo.json', JSON.stringify({ limits: [{ provider: 'anthropic', tokensPerMinute: 5 }] })))).toThrow(/^AGENT_LIMITS_FILE: limits\.0: .*"tokensPerMinute"/);
    expect(() => loadFleetLimits(file('secret.json', '{"limits": sk-ant-secret'))).toThrow(new ConfigError(`AGENT_LIMITS_FILE: ${JSON.stringify(path.join(dir, 'secret.json'))} is not JSON`));
    expect(() => loadFleetLimits(path.join(dir, 'missing.json'))).toThrow(/^AGENT_LIMITS_FILE: cannot read ".*missing\.json": ENOENT/);
  });
});
