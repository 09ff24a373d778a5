/**
 * `--only sessions`: many open sessions on one worker (bench/open-sessions.ts, issue #32 §3).
 * The scales and the result's shape.
 */
export interface OpenSessionsSettings {
  /** Sessions opened on the one worker, each left idle after its turns. */
  sessions: number;
  /** Turns each session runs before it is left idle (one step each): a few turns of history. */
  turnsEach: number;
  /** The worker's sticky cache (maxCachedWorkflows); the sessions beyond it are evicted. */
  cacheSize: number;
  /** Messages sent to random open sessions once all are open, at `ratePerSecond`. */
  messages: number;
  ratePerSecond: number;
  /** Sessions with one turn of `deepSteps` steps behind them, evicted by the others, then sent a message each. */
  deepSessions: number;
  deepSteps: number;
}

export const OPEN_SESSIONS_SCALES = {
  full: { sessions: 5_000, turnsEach: 2, cacheSize: 1_000, messages: 300, ratePerSecond: 5, deepSessions: 5, deepSteps: 200 },
  quick: { sessions: 500, turnsEach: 2, cacheSize: 100, messages: 60, ratePerSecond: 5, deepSessions: 2, deepSteps: 50 },
  smoke: { sessions: 20, turnsEach: 1, cacheSize: 5, messages: 10, ratePerSecond: 10, deepSessions: 1, deepSteps: 5 },
} as const satisfies Record<string, OpenSessionsSettings>;

/** The time from a message's `send` to its session's first LLM request, as p50/p99 over a kind of session. */
export interface FirstRequestLatency {
  count: number;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
}

export interface OpenSessionsResult {
  settings: OpenSessionsSettings;
  /** Seconds to open every session (their turns included). */
  openS: number;
  baselineRssMb: number;
  /** The worker's RSS with every session open and idle, after garbage collection. */
  openRssMb: number;
  /** Sessions the worker held in its cache then (at most `cacheSize`). */
  cachedWorkflows: number;
  /** (RSS open − baseline) / cached sessions: what a cached idle session holds; evicted ones hold nothing of the worker's. */
  rssPerCachedSessionKb: number;
  /** The steady phase's workflow tasks that found their session in the sticky cache, and those that did not (a turn is several tasks), from the worker SDK's own counters. */
  stickyHits: number;
  stickyMisses: number;
  stickyHitRate: number | null;
  /** Messages to sessions the worker had cached (by the order they were last used), and to evicted ones. */
  cached: FirstRequestLatency;
  evicted: FirstRequestLatency;
  /** Messages to the deep sessions, evicted, each with `deepSteps` steps behind it to replay. */
  evictedDeep: FirstRequestLatency;
  durationS: number;
}
