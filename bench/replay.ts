import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import type { Bundle } from './bundles';
import type { LongSession } from './history-growth';
import { median, round } from './stats';

export interface ReplayResult {
  steps: number;
  events: number;
  runs: number;
  /** Median of `Worker.runReplayHistory` wall times, which include creating the replay worker but not bundling. */
  medianMs: number;
  maxMs: number;
  succeeded: boolean;
  /** The replay failure, when there was one (a determinism error names the command that differed). */
  error?: string;
}

/**
 * Benchmark 4: replays the longest session's history with the prebuilt bundle, as a
 * replay test or a cache miss on a worker would. A determinism error fails the run.
 */
export async function measureReplay(bundle: Bundle, session: LongSession, runs: number): Promise<ReplayResult> {
  const history = historyFromJSON(JSON.parse(session.historyJson));
  const times: number[] = [];
  let error: string | undefined;
  for (let run = 0; run < runs && error === undefined; run++) {
    const started = performance.now();
    try {
      await Worker.runReplayHistory({ workflowBundle: { code: bundle.code } }, history, session.workflowId);
      times.push(performance.now() - started);
    } catch (failure) {
      error = failure instanceof Error ? `${failure.name}: ${failure.message}` : String(failure);
    }
  }
  return {
    steps: session.steps,
    events: history.events?.length ?? 0,
    runs: times.length,
    medianMs: round(median(times), 1),
    maxMs: round(Math.max(...times), 1),
    succeeded: error === undefined,
    ...(error === undefined ? {} : { error }),
  };
}
