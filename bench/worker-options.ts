import type { BenchEnv } from './bench-env';
import { within } from './deadline';
import { llmStepStarts } from './scripted-turn';
import { intervals, summarizeRuns } from './stats';
import { endSession, runSessionTurn } from './temporal-runs';
import { runLevel } from './throughput';
import type { WorkerTuning } from './worker-protocol';

/** One turn of the latency part; a healthy one takes a few seconds. */
const TURN_TIMEOUT_MS = 60_000;

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
  /** Why the case has no numbers: a setting can stall the worker outright. */
  error?: string;
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
 * Server settings that change a step's latency, each against the project's choice
 * (DEFAULT_DYNAMIC_CONFIG): eager activity execution off, and the history service's
 * transfer-queue poll rate at its default of 20 loads a second, under which a task
 * written just after a load waits for the next one, up to 50 ms.
 */
export function serverSweepCases(): ServerSweepCase[] {
  return [
    { option: 'system.enableActivityEagerExecution', value: 'false (server)', eager: false, dynamicConfig: {} },
    { option: 'history.transferProcessorMaxPollRPS', value: '20 (server default)', eager: true, dynamicConfig: { 'history.transferProcessorMaxPollRPS': 20 } },
  ];
}

/**
 * Measures one case on a fresh worker process: step latency one session at a time, then
 * throughput under load. A case that fails or stalls is recorded with its error rather
 * than ending the run: that a setting stalls the worker is itself the finding.
 */
export async function measureCase(env: BenchEnv, sweepCase: SweepCase, settings: SweepSettings, serverConfig: Record<string, unknown> = {}): Promise<SweepRow> {
  const worker = await env.startWorker('agent', sweepCase.tuning);
  const row: SweepRow = {
    ...sweepCase,
    serverConfig,
    stepP50Ms: Number.NaN,
    stepP95Ms: Number.NaN,
    concurrency: settings.concurrency,
    stepsPerSec: 0,
    loadP95StepMs: Number.NaN,
    workerCpuPct: 0,
    workerRssMb: 0,
  };
  try {
    const runs: number[][] = [];
    for (let run = 0; run <= settings.runs; run++) {
      const turn = await within(runSessionTurn(env.client, env.llm, worker.taskQueue, settings.steps, 'sweep'), TURN_TIMEOUT_MS, 'a sweep turn');
      await endSession(turn.handle);
      if (run > 0) runs.push(intervals(llmStepStarts(env.llm, turn.model))); // run 0 warms up
    }
    const latency = summarizeRuns(runs);
    Object.assign(row, { stepP50Ms: latency.p50, stepP95Ms: latency.p95 });
    const load = await runLevel(env, worker, settings.concurrency, {
      stepsPerSession: settings.stepsPerSession,
      warmupMs: 1_000,
      windowMs: settings.windowMs,
    });
    return Object.assign(row, {
      stepsPerSec: load.stepsPerSec,
      loadP95StepMs: load.p95StepMs,
      workerCpuPct: load.workerCpuPct,
      workerRssMb: load.workerRssMb,
    });
  } catch (error) {
    return { ...row, error: error instanceof Error ? error.message : String(error) };
  } finally {
    await worker.stop();
  }
}
