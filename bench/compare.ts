import type { BenchEnv } from './bench-env';
import type { OverheadSettings } from './overhead';
import { processCpuMs } from './process-cpu';
import { revisionBundle } from './revision-bundle';
import { llmStepStarts } from './scripted-turn';
import { intervals, median, round, summarizeRuns } from './stats';
import { table } from './table';
import { endSession, runFloor, runSessionTurn } from './temporal-runs';
import type { BenchWorker } from './worker-handle';

/** One loop's figures in a comparison: medians over its measured turns. */
export interface CompareLoop {
  stepP50Ms: number;
  stepP95Ms: number;
  /** Step p50 ÷ the floor's, from the same rounds. */
  toFloor: number;
  workerCpuMsPerStep: number;
  serverCpuMsPerStep: number;
}

export interface CompareResult {
  /** The revision as given, and the commit it named. */
  rev: string;
  commit: string;
  settings: OverheadSettings;
  loops: { rev: CompareLoop; tree: CompareLoop; floor: CompareLoop };
}

/**
 * `--compare REV`: the session workflow of a git revision against the working tree's, with
 * the floor beside them. One turn of each runs in turn, round after round, so a noisy
 * moment on the machine hits all three alike: the ratio of two runs of `npm run bench` on
 * this machine moves more than most single changes do. Only the workflow code (the sandbox
 * bundle) differs between the two agents; activities, worker and server are the working
 * tree's. Each loop has its own worker process, so its CPU is its own.
 */
export async function measureComparison(env: BenchEnv, rev: string, settings: OverheadSettings): Promise<CompareResult> {
  // The working tree's and the floor's workers start while the revision is bundled, as a
  // process start is seconds of waiting; if bundling fails, env.close() stops them, and a
  // failure of theirs is reported where they are awaited.
  const started = Promise.all([env.startWorker('agent'), env.startWorker('floor')]);
  void started.catch(() => undefined);
  const { commit, bundle, remove } = await revisionBundle(rev);
  try {
    const [revWorker, [tree, floor]] = await Promise.all([env.startWorker('agent', {}, bundle), started]);
    const workers = { rev: revWorker, tree, floor };
    const samples: Record<'rev' | 'tree' | 'floor', TurnSample[]> = { rev: [], tree: [], floor: [] };
    await floor.probes(); // drop anything earlier
    const loops = ['rev', 'tree', 'floor'] as const;
    for (let round = 0; round < settings.warmupRuns + settings.runs; round++) {
      // The server's work for a turn outlasts it a little (closing the workflow, visibility),
      // and lands in the next turn's CPU window: each loop follows each other one in turn.
      for (let i = 0; i < loops.length; i++) {
        const loop = loops[(round + i) % loops.length] as (typeof loops)[number];
        const measured = await oneTurn(env, loop, workers[loop], settings.steps);
        if (round >= settings.warmupRuns) samples[loop].push(measured);
      }
    }
    await Promise.all([workers.rev.stop(), workers.tree.stop()]);
    const floorP50 = summarizeRuns(samples.floor.map((s) => s.intervals)).p50;
    const figures = (loop: keyof typeof samples): CompareLoop => {
      const latency = summarizeRuns(samples[loop].map((s) => s.intervals));
      return {
        stepP50Ms: latency.p50,
        stepP95Ms: latency.p95,
        toFloor: round(latency.p50 / floorP50),
        workerCpuMsPerStep: round(median(samples[loop].map((s) => s.workerCpuMs / settings.steps)), 1),
        serverCpuMsPerStep: round(median(samples[loop].map((s) => s.serverCpuMs / settings.steps)), 1),
      };
    };
    return { rev, commit, settings, loops: { rev: figures('rev'), tree: figures('tree'), floor: figures('floor') } };
  } finally {
    await remove();
  }
}

export function formatComparison(result: CompareResult): string {
  const { rev, commit, settings, loops } = result;
  const row = (name: string, l: CompareLoop) => [name, l.stepP50Ms, l.stepP95Ms, l.toFloor, l.workerCpuMsPerStep, l.serverCpuMsPerStep];
  return [
    `Comparison: the session workflow of ${rev} (${commit.slice(0, 12)}) against the working tree's, turns of ${settings.steps} steps, ${settings.runs} rounds after ${settings.warmupRuns} warm-up, one turn of each loop per round in a rotating order:`,
    table(
      ['loop', 'step p50 ms', 'step p95 ms', '÷ floor', 'worker CPU ms/step', 'server CPU ms/step'],
      [row(rev, loops.rev), row('working tree', loops.tree), row('floor', loops.floor)],
    ),
    `   working tree − ${rev}: ${signed(loops.tree.stepP50Ms - loops.rev.stepP50Ms)} ms step p50, ${signed(loops.tree.workerCpuMsPerStep - loops.rev.workerCpuMsPerStep)} ms worker CPU, ${signed(loops.tree.serverCpuMsPerStep - loops.rev.serverCpuMsPerStep)} ms server CPU per step`,
  ].join('\n');
}

interface TurnSample {
  intervals: number[];
  workerCpuMs: number;
  serverCpuMs: number;
}

async function oneTurn(env: BenchEnv, loop: 'rev' | 'tree' | 'floor', worker: BenchWorker, steps: number): Promise<TurnSample> {
  const before = await Promise.all([processCpuMs(worker.pid), processCpuMs(env.server.pid)]);
  let starts: number[];
  if (loop === 'floor') {
    const { workflowId } = await runFloor(env.client, worker.taskQueue, steps);
    starts = (await worker.probes())[workflowId] ?? [];
  } else {
    const turn = await runSessionTurn(env.client, env.llm, worker.taskQueue, steps, loop);
    await endSession(turn.handle);
    starts = llmStepStarts(env.llm, turn.model);
  }
  const after = await Promise.all([processCpuMs(worker.pid), processCpuMs(env.server.pid)]);
  const delta = (i: 0 | 1) => (after[i] ?? Number.NaN) - (before[i] ?? Number.NaN);
  if (starts.length !== steps) throw new Error(`bench --compare: the ${loop} turn took ${starts.length} steps instead of ${steps}`);
  return { intervals: intervals(starts), workerCpuMs: delta(0), serverCpuMs: delta(1) };
}

function signed(value: number): string {
  const rounded = round(value, 1);
  return rounded > 0 ? `+${rounded}` : String(rounded);
}
