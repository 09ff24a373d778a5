import { describe, expect, it } from 'vitest';
import { formatOpenSessions } from '../bench/open-sessions-report';
import { OPEN_SESSIONS_SCALES, type OpenSessionsResult } from '../bench/open-sessions-result';
import { parseBenchArgs } from '../bench/options';

/**
 * `npm run bench -- --only sessions` kept honest where it can be without its thousands of
 * sessions: its options, its scales and its report. The run itself opens thousands of
 * sessions on a worker process of its own; `--smoke` runs it in a quarter of a minute.
 */

describe('the open-sessions benchmark', () => {
  it('reads --only sessions, and every scale evicts: more sessions than the cache holds', () => {
    expect(parseBenchArgs(['--only', 'sessions', '--quick']).only).toBe('sessions');
    for (const scale of Object.values(OPEN_SESSIONS_SCALES)) expect(scale.sessions).toBeGreaterThan(scale.cacheSize);
  });

  it('reports memory per cached session, the cache\'s hit rate and the first-request latency of cached, evicted and deep sessions', () => {
    const latency = (p50Ms: number) => ({ count: 4, p50Ms, p99Ms: p50Ms * 2, maxMs: p50Ms * 3 });
    const result: OpenSessionsResult = {
      settings: OPEN_SESSIONS_SCALES.smoke,
      openS: 5.5,
      baselineRssMb: 250,
      openRssMb: 260,
      cachedWorkflows: 5,
      rssPerCachedSessionKb: 2048,
      stickyHits: 5,
      stickyMisses: 15,
      stickyHitRate: 0.25,
      cached: latency(20),
      evicted: latency(60),
      evictedDeep: latency(120),
      durationS: 13,
    };
    const text = formatOpenSessions(result);
    expect(text).toContain('2048 KB per cached idle session');
    expect(text).toContain('5 hits, 15 misses (hit rate 0.25)');
    expect(text).toMatch(/evicted, 5 steps behind it\s+4\s+120\s+240\s+360/);
  });
});
