import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { FleetLimitsFileSchema } from '../contracts/fleet-limits';
import { RetryPolicySchema } from '../contracts/retry-policy';
import { ladderOf, limitsFileOf, measureLimits } from '../bench/limits';
import { formatLimits } from '../bench/limits-report';
import { LIMITS_SCALES, LimitsResultSchema, type LimitsResult } from '../bench/limits-result';
import { parseBenchArgs } from '../bench/options';
import { workerLogFile } from './support/worker-processes';
import { devServerAddress, devServerNamespace } from './temporal-env';

/**
 * `npm run bench -- --only limits` kept honest: its pieces on their own (the scaled ladder,
 * the limits file it writes), and the whole benchmark once at its smoke size on the suite's
 * dev server (two worker processes, the scripted LLM's limit) to show it reports every
 * figure. Timings on a shared machine are noise: nothing here asserts one.
 */

describe('the limits benchmark\'s settings', () => {
  it('reads --only limits', () => {
    expect(parseBenchArgs(['--only', 'limits', '--quick']).only).toBe('limits');
  });

  it('scales the default ladder by the window as a minute scales to it, within the policy\'s bounds', () => {
    expect(ladderOf(5)).toEqual({ maxRetries: 10, baseDelayMs: 100, maxDelayMs: 2_500, budgetMs: 20_000, maxServerWaitMs: 5_000 });
    expect(ladderOf(60)).toEqual({ maxRetries: 10, baseDelayMs: 1_000, maxDelayMs: 30_000, budgetMs: 240_000, maxServerWaitMs: 60_000 });
    for (const scale of Object.values(LIMITS_SCALES)) expect(RetryPolicySchema.safeParse(ladderOf(scale.windowSeconds)).success).toBe(true);
  });

  it('writes a limits file the workers accept, holding the shared model to the provider\'s own allowance', () => {
    for (const scale of Object.values(LIMITS_SCALES)) {
      const { limits } = FleetLimitsFileSchema.parse({ limits: limitsFileOf(scale, 'run') });
      const shared = limits.find((l) => l.model === 'echo-limits-shared-run');
      expect(((shared?.inputTokensPerMinute ?? 0) * scale.windowSeconds) / 60).toBe(scale.tokensPerWindow);
      expect(limits.map((l) => l.model)).not.toContain('echo-limits-ladder-run');
    }
  });
});

describe('the limits benchmark at its smoke size', () => {
  const settings = LIMITS_SCALES.smoke;
  let result: LimitsResult;
  let text: string;

  beforeAll(async () => {
    const measured = await measureLimits(settings, {
      progress: () => undefined,
      target: { address: devServerAddress(), namespace: devServerNamespace() },
      workerLog: workerLogFile('bench-limits'),
      // Real worker processes, on the suite's cached workflow bundle: bundling in each would take most of the file's time.
      workerEntry: path.join(import.meta.dirname, 'support', 'agents-worker.ts'),
    });
    // As main writes it and a reader gets it back.
    result = LimitsResultSchema.parse(JSON.parse(JSON.stringify(measured)));
    text = formatLimits(result);
  }, 120_000);

  it('runs the load without and with the shared limit, every turn accounted for, one served request per completed turn', () => {
    expect(result.runs.map((r) => r.run)).toEqual(['ladder', 'shared']);
    for (const run of result.runs) {
      expect(run.turnsCompleted + run.turnsFailed).toBe(settings.sessions * settings.turns);
      // An echo model answers each turn in one call: what the provider served is what completed.
      expect(run.requests - run.rateLimited).toBe(run.turnsCompleted);
      expect(run.allowanceTokens).toBe(settings.tokensPerWindow);
      expect(run.peakTokens).toBeLessThanOrEqual(run.allowanceTokens);
    }
    expect(text).toMatch(/ladder alone +\d+/);
    expect(text).toMatch(/shared limit +\d+/);
  });

  it('keeps every request of the shared run under the provider\'s limit: no 429, no failed turn', () => {
    const [, shared] = result.runs;
    expect(shared.rateLimited).toBe(0);
    expect(shared.turnsFailed).toBe(0);
    expect(shared.limiter?.signals).toBe(shared.requests);
    expect(shared.limiter?.updates).toBeGreaterThanOrEqual(shared.requests);
  });

  it('measures the not-limited cost: the time before each request leaves on both sides, and the limiter\'s actions per call', () => {
    const { runs, limiter } = result.notLimited;
    expect(runs.map((r) => r.run)).toEqual(['no-limits', 'not-binding']);
    for (const run of runs) {
      expect(run.calls).toBe(settings.costSessions * (settings.costRounds - 1));
      expect(run.startToRequestP50Ms).not.toBeNull();
      expect(run.activityP50Ms).not.toBeNull();
    }
    expect(result.notLimited.addedStartToRequestMs).not.toBeNull();
    // Never binding: each call asks once and releases once, and no timer is started.
    const calls = settings.costSessions * settings.costRounds;
    expect(limiter).toMatchObject({ calls, updates: calls, signals: calls, timers: 0, starts: 1, runs: 1 });
    expect(limiter.perCall).toBeCloseTo((2 * calls + 1) / calls, 2);
    expect(text).toContain('actions a call');
  });
});
