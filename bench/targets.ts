import type { BenchResult, Target } from './result';

/** The targets of issue 7, checked against one run. In `--quick` they are checked at its smaller scale. */
export function checkTargets(r: Omit<BenchResult, 'targets'>): Target[] {
  const check = (name: string, value: number | null, target: string, met: (v: number) => boolean): Target => ({
    name,
    value,
    target,
    met: value !== null && Number.isFinite(value) && met(value),
  });
  return [
    check('step overhead ÷ floor step (p50)', r.overhead.overheadToFloor, '≤ 1.2', (v) => v <= 1.2),
    check('step overhead over the plain loop, p50 ms', r.overhead.overheadP50Ms, '≤ 25', (v) => v <= 25),
    check('saturation steps/s, % of the floor', Math.round(r.throughput.agentToFloor * 1000) / 10, '≥ 80', (v) => v >= 80),
    check(`replay of ${r.replay.steps} steps, ms`, r.replay.succeeded ? r.replay.medianMs : null, '< 2000', (v) => v < 2000),
    check(`history bytes ${r.history.ratio.top} ÷ ${r.history.ratio.base} steps`, r.history.ratio.value, '≤ 12', (v) => v <= 12),
  ];
}
