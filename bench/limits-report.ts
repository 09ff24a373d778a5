import type { LimiterActions, LimitsResult } from './limits-result';
import { table } from './table';

/** The fleet-limits benchmark's tables: the load with and without the shared limit, then what the limiter costs when it does not bind. */
export function formatLimits(r: LimitsResult): string {
  const s = r.settings;
  const l = r.ladder;
  const seconds = (ms: number | null) => (ms === null ? null : Math.round(ms / 100) / 10);
  const actions = (a: LimiterActions) => `${a.total} (${a.updates} Updates, ${a.signals} signals, ${a.timers} timers, ${a.starts} starts)`;
  const [none, loose] = r.notLimited.runs;
  return [
    `Fleet limits: ${s.sessions} sessions × ${s.turns} turns at once on two worker processes of one task queue, against a provider allowing ${s.tokensPerWindow} input tokens per ${s.windowSeconds} s; ${r.durationS} s in all.`,
    `Both runs' ladder is the default scaled by the window (${s.windowSeconds} s for 60): ${l.baseDelayMs} ms first wait, ${l.maxDelayMs} ms cap, ${l.budgetMs} ms budget.`,
    table(
      ['run', 'turns completed', 'failed', 'requests', '429s', 'turn p50 s', 'turn p95 s', 'peak tokens / allowance', 'peak asked', 'tokens / request', 'run s'],
      r.runs.map((run) => [
        run.run === 'ladder' ? 'ladder alone' : 'shared limit',
        run.turnsCompleted,
        run.turnsFailed === 0 ? 0 : `${run.turnsFailed} (${Object.entries(run.failures).map(([type, n]) => `${n} ${type}`).join(', ')})`,
        run.requests,
        run.rateLimited,
        seconds(run.turnP50Ms),
        seconds(run.turnP95Ms),
        `${run.peakTokens} / ${run.allowanceTokens}`,
        run.peakAskedTokens,
        run.meanRequestTokens,
        seconds(run.durationMs),
      ]),
    ),
    ...r.runs.flatMap((run) => Object.entries(run.failureMessages).map(([message, n]) => `${run.run === 'ladder' ? 'ladder alone' : 'shared limit'}: ${n} turn(s) failed: ${message}`)),
    ...r.runs.flatMap((run) => (run.limiter ? [`The shared run's limiter: ${actions(run.limiter)} for ${run.limiter.calls} calls, ${run.limiter.perCall ?? '–'} a call.`] : [])),
    `When the limit does not bind: ${s.costSessions} session(s) a run, ${s.costRounds} rounds of one turn each (the first a warm-up), a model without a limit against one under a limit far above the load.`,
    table(
      ['run', 'LLM calls', 'start → request p50 ms', 'p95 ms', 'LLM activity p50 ms'],
      [none, loose].map((c) => [c.run, c.calls, c.startToRequestP50Ms, c.startToRequestP95Ms, c.activityP50Ms]),
    ),
    `Added per call: ${r.notLimited.addedStartToRequestMs ?? '–'} ms before the request leaves, ${r.notLimited.addedActivityMs ?? '–'} ms of the activity; the limiter: ${actions(r.notLimited.limiter)} for ${r.notLimited.limiter.calls} calls, ${r.notLimited.limiter.perCall ?? '–'} actions a call.`,
  ].join('\n');
}
