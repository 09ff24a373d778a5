/**
 * Order statistics for latency samples. Percentiles use the nearest-rank method (no
 * interpolation): every reported figure is a latency that was actually observed.
 */

export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  if (p < 0 || p > 100) throw new RangeError(`percentile must be within 0..100, got ${p}`);
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] as number;
}

export function median(samples: readonly number[]): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export interface LatencySummary {
  /** Samples pooled over all runs. */
  n: number;
  /** Median over runs of each run's p50 (the headline: robust to one noisy run). */
  p50: number;
  /** Median over runs of each run's p95. */
  p95: number;
  /** p50 of each run, in run order, so the spread is visible. */
  runP50s: number[];
}

/** Summarizes latency samples grouped by run: the medians of the per-run percentiles. */
export function summarizeRuns(runs: readonly (readonly number[])[]): LatencySummary {
  const nonEmpty = runs.filter((r) => r.length > 0);
  return {
    n: nonEmpty.reduce((sum, r) => sum + r.length, 0),
    p50: round(median(nonEmpty.map((r) => percentile(r, 50)))),
    p95: round(median(nonEmpty.map((r) => percentile(r, 95)))),
    runP50s: nonEmpty.map((r) => round(percentile(r, 50))),
  };
}

/** Consecutive differences: per-step latencies from the times at which steps started. */
export function intervals(times: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 1; i < times.length; i++) out.push((times[i] as number) - (times[i - 1] as number));
  return out;
}

/** Two decimals: sub-millisecond noise in a table is noise. */
export function round(value: number, decimals = 2): number {
  const f = 10 ** decimals;
  return Math.round(value * f) / f;
}
