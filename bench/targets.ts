import { CLI_TARGETS } from './cli-speed';
import type { BenchResult, Target } from './result';

/**
 * The targets still in force, checked against one run; in `--quick` at its smaller scale.
 * The step's ratio to the no-op floor (≤ 1.2) and saturation against it (≥ 80 %) were
 * retired on 2026-12-01: the floor's activities do nothing, so what the agent does beyond
 * it is the product's own work (its HTTP call and stream, the log, the status upserts).
 * Both are still measured and reported beside the floor; the floor that does the agent's
 * I/O (bench/floor/io-activities.ts) is the reference now.
 */
export function checkTargets(r: Omit<BenchResult, 'targets'>): Target[] {
  const check = (name: string, value: number | null, target: string, met: (v: number) => boolean): Target => ({
    name,
    value,
    target,
    met: value !== null && Number.isFinite(value) && met(value),
  });
  return [
    check('step overhead over the plain loop, p50 ms', r.overhead.overheadP50Ms, '≤ 25', (v) => v <= 25),
    check('agent step ÷ the floor doing its I/O, p50', r.overhead.temporalToIoFloor, '≤ 1.15', (v) => v <= 1.15),
    check('agent saturation ÷ the floor doing its I/O', r.throughput.agentToIoFloor, '≥ 0.85', (v) => v >= 0.85),
    check(`replay of ${r.replay.steps} steps, ms`, r.replay.succeeded ? r.replay.medianMs : null, '< 2000', (v) => v < 2000),
    check(`history bytes ${r.history.ratio.top} ÷ ${r.history.ratio.base} steps`, r.history.ratio.value, '≤ 12', (v) => v <= 12),
    check('agent --help, compiled, median ms', r.cli.agentHelpMs, `≤ ${CLI_TARGETS.agentHelpMs}`, (v) => v <= CLI_TARGETS.agentHelpMs),
    check('agent list, compiled, median ms', r.cli.agentListMs, `≤ ${CLI_TARGETS.agentListMs}`, (v) => v <= CLI_TARGETS.agentListMs),
    ...(r.actions
      ? [
          check('actions of a first turn over its minimum', r.actions.session.meteredTotal - r.actions.session.minimum, '≤ 2', (v) => v <= 2),
          check('actions of a later turn over its minimum', r.actions.session.laterTurn.meteredTotal - r.actions.session.laterTurn.minimum, '≤ 2', (v) => v <= 2),
        ]
      : []),
    ...(r.sessions
      ? [
          check('RSS per cached idle session, KB', r.sessions.rssPerCachedSessionKb, '≤ 1024', (v) => v <= 1024),
          check(`first LLM request of an evicted session with ${r.sessions.settings.deepSteps} steps behind it, p99 ms`, r.sessions.evictedDeep.p99Ms, '≤ 300', (v) => v <= 300),
        ]
      : []),
  ];
}
