import type { FirstRequestLatency, OpenSessionsResult } from './open-sessions-result';
import { table } from './table';

/** The open-sessions benchmark's table: memory per cached session, the cache's hit rate, and how long a message waits for its first LLM request. */
export function formatOpenSessions(r: OpenSessionsResult): string {
  const s = r.settings;
  const row = (what: string, l: FirstRequestLatency) => [what, l.count, l.p50Ms, l.p99Ms, l.maxMs];
  return [
    `Open sessions: ${s.sessions} sessions of ${s.turnsEach} turn(s) and ${s.deepSessions} of ${s.deepSteps} steps on one worker with a sticky cache of ${s.cacheSize}, opened in ${r.openS} s; then ${s.messages} messages to random ones at ${s.ratePerSecond}/s; ${r.durationS} s in all.`,
    `Worker RSS ${r.baselineRssMb} MB before, ${r.openRssMb} MB with every session open and ${r.cachedWorkflows} cached: ${r.rssPerCachedSessionKb} KB per cached idle session.`,
    `Sticky cache over the messages' workflow tasks: ${r.stickyHits} hits, ${r.stickyMisses} misses${r.stickyHitRate === null ? '' : ` (hit rate ${r.stickyHitRate})`}.`,
    table(['from send to the first LLM request', 'messages', 'p50 ms', 'p99 ms', 'max ms'], [row('cached session', r.cached), row('evicted session', r.evicted), row(`evicted, ${s.deepSteps} steps behind it`, r.evictedDeep)]),
  ].join('\n\n');
}
