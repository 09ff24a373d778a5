import type { BenchEnv } from './bench-env';
import { llmStepStarts } from './scripted-turn';
import { intervals, summarizeRuns } from './stats';
import { endSession, runSessionTurn } from './temporal-runs';
import { runLevel } from './throughput';
import type { WorkerTuning } from './worker-protocol';

export interface SweepCase {
  /** The option varied, e.g. `maxCachedWorkflows`; `defaults` for the baseline. */
  option: string;
  value: string;
  tuning: WorkerTuning;
}

/** A server setting: measured on a dev server of its own, with the default worker. */
export interface ServerSweepCase {
  option: string;
  value: string;
  eager: boolean;
  dynamicConfig: Record<string, unknown>;
}

export interface SweepRow extends SweepCase {
  /** The server's dynamic config beyond the benchmark's base, `{}` for worker options. */
  serverConfig: Record<string, unknown>;
  /** One session at a time: median of per-run p50/p95 of the step latency. */
  stepP50Ms: number;
  stepP95Ms: number;
  /** Under load, at the concurrency where the defaults peaked. */
  concurrency: number;
  stepsPerSec: number;
  loadP95StepMs: number;
  workerCpuPct: number;
  workerRssMb: number;
}

export interface SweepSettings {
  runs: number;
  steps: number;
  windowMs: number;
  /** The load level: where the default worker peaked in benchmark 2. */
  concurrency: number;
  stepsPerSession: number;
}

/**
 * The worker options worth measuring, each varied alone around the defaults. Values are
 * chosen to bracket what matters on this workload: a cache smaller than the number of
 * busy sessions, activity slots fewer than the 3 × sessions tool calls that want one, and
 * workflow-task slots from starved to generous.
 */
export function sweepCases(concurrency: number): SweepCase[] {
  const halfTheSessions = Math.max(2, Math.floor(concurrency / 2));
  return [
    { option: 'defaults', value: 'SDK defaults', tuning: {} },
    { option: 'maxCachedWorkflows', value: '0 (no sticky cache)', tuning: { maxCachedWorkflows: 0 } },
    { option: 'maxCachedWorkflows', value: `${halfTheSessions} (half the busy sessions)`, tuning: { maxCachedWorkflows: halfTheSessions } },
    { option: 'maxCachedWorkflows', value: '2000', tuning: { maxCachedWorkflows: 2000 } },
    { option: 'maxConcurrentActivityTaskExecutions', value: '4', tuning: { maxConcurrentActivityTaskExecutions: 4 } },
    { option: 'maxConcurrentActivityTaskExecutions', value: '20', tuning: { maxConcurrentActivityTaskExecutions: 20 } },
    { option: 'maxConcurrentActivityTaskExecutions', value: '400', tuning: { maxConcurrentActivityTaskExecutions: 400 } },
    { option: 'maxConcurrentWorkflowTaskExecutions', value: '2', tuning: { maxConcurrentWorkflowTaskExecutions: 2 } },
    { option: 'maxConcurrentWorkflowTaskExecutions', value: '10', tuning: { maxConcurrentWorkflowTaskExecutions: 10 } },
    { option: 'maxConcurrentWorkflowTaskExecutions', value: '200', tuning: { maxConcurrentWorkflowTaskExecutions: 200 } },
    { option: 'maxEagerActivityReservationsPerWorkflowTask', value: '0 (worker declines eager)', tuning: { maxEagerActivityReservationsPerWorkflowTask: 0 } },
    // Last, to show how far the machine drifted while the sweep ran.
    { option: 'defaults', value: 'SDK defaults (again)', tuning: {} },
  ];
}

/**
 * Server settings that change a step's latency: eager activity execution off (the
 * project turns it on), and the history service's transfer-queue poll rate. The dev
 * server loads new transfer tasks (a workflow task after an activity completes, a
 * non-eager activity) at most `history.transferProcessorMaxPollRPS` times a second
 * (default 20): a task written just after a load waits for the next one, up to 50 ms.
 */
export function serverSweepCases(): ServerSweepCase[] {
  return [
    { option: 'system.enableActivityEagerExecution', value: 'false (server)', eager: false, dynamicConfig: {} },
    { option: 'history.transferProcessorMaxPollRPS', value: '1000 (server; default 20)', eager: true, dynamicConfig: { 'history.transferProcessorMaxPollRPS': 1000 } },
  ];
}

/** Measures one case on a fresh worker process: step latency one session at a time, then throughput under load. */
export async function measureCase(env: BenchEnv, sweepCase: SweepCase, settings: SweepSettings, serverConfig: Record<string, unknown> = {}): Promise<SweepRow> {
  const worker = await env.startWorker('agent', sweepCase.tuning);
  try {
    const runs: number[][] = [];
    for (let run = 0; run <= settings.runs; run++) {
      const turn = await runSessionTurn(env.client, env.llm, worker.taskQueue, settings.steps, 'sweep');
      await endSession(turn.handle);
      if (run > 0) runs.push(intervals(llmStepStarts(env.llm, turn.model))); // run 0 warms up
    }
    const latency = summarizeRuns(runs);
    const load = await runLevel(env, worker, settings.concurrency, {
      stepsPerSession: settings.stepsPerSession,
      warmupMs: 1_000,
      windowMs: settings.windowMs,
    });
    return {
      ...sweepCase,
      serverConfig,
      stepP50Ms: latency.p50,
      stepP95Ms: latency.p95,
      concurrency: settings.concurrency,
      stepsPerSec: load.stepsPerSec,
      loadP95StepMs: load.p95StepMs,
      workerCpuPct: load.workerCpuPct,
      workerRssMb: load.workerRssMb,
    };
  } finally {
    await worker.stop();
  }
}
