import { z } from 'zod';
import type { ScaleName } from './options';

/**
 * What `npm run bench -- --only limits` measures (bench/limits.ts), as the JSON it writes
 * to bench/results/: a schema, so test/bench-limits.test.ts reads the file back through it.
 * Times are milliseconds unless a name says otherwise; a figure with no sample is null.
 */

const whole = z.number().int().nonnegative();
const ms = z.number().nullable();

export const LimitsSettingsSchema = z
  .strictObject({
    /** Sessions of each limited run, all started at once, on two worker processes of one task queue. */
    sessions: z.number().int().positive(),
    /** Turns each of them sends, one after the other: one LLM call each (an echo model answers at once). */
    turns: z.number().int().positive(),
    /**
     * The provider's window, in whole seconds that divide a minute (the limits file's
     * `windowSeconds` is whole seconds and its figures per minute): 5 s stands for 60 s,
     * so a run takes a twelfth of the time it would at a provider, and the ladder is
     * scaled by the same factor (`ladderOf`).
     */
    windowSeconds: z
      .number()
      .int()
      .positive()
      .refine((s) => 60 % s === 0, { error: 'must divide 60' }),
    /** Input tokens the provider allows in a window, and the limits file the same: a few requests' worth. */
    tokensPerWindow: z.number().int().positive(),
    /** The not-limited cost: sessions of each of the two runs (no limits file, a limit far above the load). */
    costSessions: z.number().int().positive(),
    /**
     * Rounds of one turn of each of those sessions, the two runs' blocks in alternating
     * order; the first is a warm-up, not measured (it starts the limiter, and fills the
     * workers' caches): at least two.
     */
    costRounds: z.number().int().min(2),
  });
export type LimitsSettings = z.infer<typeof LimitsSettingsSchema>;

/** Each scale's load (bench/options.ts names the scales; this benchmark's sizes live here). */
export const LIMITS_SCALES: Record<ScaleName, LimitsSettings> = {
  // 150 calls of about 800 tokens (mostly the tools' schemas) where a window takes 16 of
  // them: some 45 s of work for the limit, whoever paces it.
  full: { sessions: 50, turns: 3, windowSeconds: 5, tokensPerWindow: 13_000, costSessions: 4, costRounds: 10 },
  // 16 calls, 4 a window.
  quick: { sessions: 8, turns: 2, windowSeconds: 2, tokensPerWindow: 3_300, costSessions: 2, costRounds: 4 },
  // The least that still binds: four calls where a window takes two.
  smoke: { sessions: 2, turns: 2, windowSeconds: 1, tokensPerWindow: 2_300, costSessions: 1, costRounds: 2 },
};

export const LimiterActionsSchema = z.strictObject({
  /** Runs of the limiter workflow read (one, unless it continued as new). */
  runs: whole,
  /** `acquire` Updates (each accepted and completed in history): one action each. */
  updates: whole,
  /** `release` signals: one action each. */
  signals: whole,
  /** Timers the limiter started, only while calls waited: one action each. */
  timers: whole,
  /** Workflow starts and continue-as-new runs: one action each. */
  starts: whole,
  total: whole,
  /** LLM calls of the run the limiter served. */
  calls: whole,
  perCall: z.number().nullable(),
});
export type LimiterActions = z.infer<typeof LimiterActionsSchema>;

/** One run of the load against the provider's tokens-per-window limit. */
export const LimitedRunSchema = z.strictObject({
  /** `ladder`: each call backs off on its own (no limits file for the model); `shared`: AGENT_LIMITS_FILE holds every call to the limit. */
  run: z.enum(['ladder', 'shared']),
  turnsCompleted: whole,
  turnsFailed: whole,
  /** Failed turns by their failure type, such as `rate_limit`. */
  failures: z.record(z.string(), whole),
  /** The same by message: the first line of each (300 characters at most), the session's ids taken out. */
  failureMessages: z.record(z.string(), whole),
  /** Requests that reached the provider, and those it answered 429 (`replyKind === 'rate_limited'`). */
  requests: whole,
  rateLimited: whole,
  /** Turn time, from the message sent to its outcome, of the completed turns. */
  turnP50Ms: ms,
  turnP95Ms: ms,
  /** The most input tokens the provider served in any window (the 429s count for nothing), against its allowance. */
  peakTokens: whole,
  /** The most input tokens asked for in any window, the refused included: the load's demand. */
  peakAskedTokens: whole,
  allowanceTokens: whole,
  /** Mean input tokens of a request, by the provider's count (JSON characters / 4). */
  meanRequestTokens: z.number(),
  durationMs: whole,
  /** The shared run only: what its limiter cost. */
  limiter: LimiterActionsSchema.optional(),
});
export type LimitedRun = z.infer<typeof LimitedRunSchema>;

/** One side of the not-limited cost. */
export const CostRunSchema = z.strictObject({
  run: z.enum(['no-limits', 'not-binding']),
  /** LLM calls measured: the warm-up round's are left out. */
  calls: whole,
  /** The LLM activity's start to its request's arrival at the scripted LLM: the lease is asked in between. */
  startToRequestP50Ms: ms,
  startToRequestP95Ms: ms,
  /** The LLM activity, started to completed (the release is sent before it completes). */
  activityP50Ms: ms,
});
export type CostRun = z.infer<typeof CostRunSchema>;

export const NotLimitedCostSchema = z.strictObject({
  runs: z.tuple([CostRunSchema, CostRunSchema]),
  /** not-binding minus no-limits, of the p50s above. */
  addedStartToRequestMs: ms,
  addedActivityMs: ms,
  /** The not-binding run's limiter. */
  limiter: LimiterActionsSchema,
});
export type NotLimitedCost = z.infer<typeof NotLimitedCostSchema>;

export const LimitsResultSchema = z.strictObject({
  settings: LimitsSettingsSchema,
  runs: z.tuple([LimitedRunSchema, LimitedRunSchema]),
  notLimited: NotLimitedCostSchema,
  /** The scaled ladder both limited runs' sessions ran with (`ladderOf`). */
  ladder: z.strictObject({ baseDelayMs: whole, maxDelayMs: whole, budgetMs: whole, maxServerWaitMs: whole, maxRetries: whole }),
  durationS: z.number(),
});
export type LimitsResult = z.infer<typeof LimitsResultSchema>;
