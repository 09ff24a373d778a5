import { setTimeout as sleep } from 'node:timers/promises';
import type { BenchEnv } from './bench-env';
import { within } from './deadline';
import { processCpuMs } from './process-cpu';
import { percentile, round } from './stats';
import { runFloor, runIoFloor, runWholeSession } from './temporal-runs';
import type { BenchWorker } from './worker-handle';
import type { WorkerStats } from './worker-protocol';

export interface LevelResult {
  concurrency: number;
  /** Step starts inside the measurement window, per second: the median window's. */
  stepsPerSec: number;
  /** Each window's steps/s, in order; the level reports the median one's figures. */
  windowStepsPerSec: number[];
  /** Latencies of steps that started and ended inside the window. */
  p50StepMs: number;
  p95StepMs: number;
  sessions: number;
  /** CPU time over the window as % of one core: the worker process, the benchmark process (client and scripted LLM), the dev server. */
  workerCpuPct: number;
  benchCpuPct: number;
  serverCpuPct: number | null;
  workerRssMb: number;
  /** CPU milliseconds per step: what one step costs the worker and the server, where saturation comes from. */
  workerCpuMsPerStep: number;
  serverCpuMsPerStep: number | null;
}

/** What a level runs: the agent's sessions, the no-op floor, or the floor doing the agent's I/O (on the floor's worker). */
export type LoadWorkflow = 'agent' | 'floor' | 'io-floor';

export interface SaturationResult {
  workflow: LoadWorkflow;
  levels: LevelResult[];
  /** The level with the most steps/s. */
  peak: LevelResult;
}

export interface LoadSettings {
  stepsPerSession: number;
  warmupMs: number;
  windowMs: number;
  /** Consecutive windows measured after the warm-up (default 3): one alone is at the mercy of a noisy stretch. */
  windows?: number;
}

/** The most sessions one simulated client starts in a level; the window ends long before. */
const MAX_SESSIONS_PER_CLIENT = 10_000;
/** After the window, sessions in flight get this long to finish. */
const DRAIN_MS = 120_000;
/** After a stall, its clients get this long to notice their terminated sessions. */
const STOP_CLIENTS_MS = 30_000;
/** A level must beat the best so far by this much to count as "still rising". */
const RISE = 1.05;

const MB = 1024 * 1024;

/**
 * One level of load: `concurrency` clients, each running whole sessions back to back
 * (start, a turn of `stepsPerSession` steps, end; for the floor, one run of it). Counted
 * are the steps that start inside a window, after a warm-up, so sessions cut by its
 * edges count exactly for the steps they ran inside it. The load runs through several
 * windows in a row and the level is the median window, CPU and latencies included.
 */
export async function runLevel(env: BenchEnv, worker: BenchWorker, concurrency: number, settings: LoadSettings, workflow: LoadWorkflow = worker.kind): Promise<LevelResult> {
  await worker.probes(); // drop earlier floor probes
  const windowCount = settings.windows ?? 3;
  const windowStart = Date.now() + settings.warmupMs;
  const boundaries = Array.from({ length: windowCount + 1 }, (_, k) => windowStart + k * settings.windowMs);
  const windowEnd = boundaries[windowCount] as number;
  const sessions: string[] = [];
  const started: string[] = [];
  let stopped = false;
  const onStart = (workflowId: string) => started.push(workflowId);
  const client = async () => {
    for (let i = 0; i < MAX_SESSIONS_PER_CLIENT && !stopped && Date.now() < windowEnd; i++) {
      if (workflow === 'agent') sessions.push(await runWholeSession(env.client, env.llm, worker.taskQueue, settings.stepsPerSession, onStart));
      else if (workflow === 'io-floor') sessions.push((await runIoFloor(env.client, env.llm, worker.taskQueue, settings.stepsPerSession, onStart)).model);
      else sessions.push((await runFloor(env.client, worker.taskQueue, settings.stepsPerSession, onStart)).workflowId);
    }
  };
  const sample = async () => ({ at: performance.now(), worker: await worker.stats(), bench: process.cpuUsage(), server: await processCpuMs(env.server.pid) });
  const measure = async () => {
    const samples: Awaited<ReturnType<typeof sample>>[] = [];
    for (const boundary of boundaries) {
      await sleep(Math.max(0, boundary - Date.now()));
      samples.push(await sample());
    }
    return samples;
  };
  const clients = Array.from({ length: concurrency }, client);
  const [samples] = await within(
    Promise.all([measure(), ...clients]),
    settings.warmupMs + windowCount * settings.windowMs + DRAIN_MS,
    `the ${workflow} load at concurrency ${concurrency}`,
  ).catch(async (error: unknown) => {
    // A stalled level must not leave clients calling into a connection that is about to
    // close: stop them, terminate what they started (which fails their pending calls),
    // and wait for them before reporting the stall.
    stopped = true;
    await Promise.allSettled(started.map((id) => env.client.workflow.getHandle(id).terminate('benchmark level stalled')));
    await within(Promise.allSettled(clients), STOP_CLIENTS_MS, 'stopping the clients of a stalled level').catch(() => undefined);
    throw error;
  });

  const starts = await stepStarts(env, worker, workflow, sessions);
  const windows = boundaries.slice(0, -1).map((from, k) => windowFigures(starts, from, boundaries[k + 1] as number, samples[k] as Sample, samples[k + 1] as Sample));
  const median = [...windows].sort((a, b) => a.stepsPerSec - b.stepsPerSec)[Math.floor(windows.length / 2)] as WindowFigures;
  return { ...median, concurrency, sessions: sessions.length, windowStepsPerSec: windows.map((w) => w.stepsPerSec) };
}

/** What one window measures; the level adds how many sessions it ran and at what concurrency. */
type WindowFigures = Omit<LevelResult, 'concurrency' | 'sessions' | 'windowStepsPerSec'>;

interface Sample {
  at: number;
  worker: WorkerStats;
  bench: NodeJS.CpuUsage;
  server: number | undefined;
}

/** One window's steps/s, step latencies and CPU, from the step starts and the samples at its two edges. */
function windowFigures(starts: readonly number[][], windowStart: number, windowEnd: number, first: Sample, last: Sample): WindowFigures {
  let inWindow = 0;
  const latencies: number[] = [];
  for (const times of starts) {
    times.forEach((t, i) => {
      if (t < windowStart || t >= windowEnd) return;
      inWindow++;
      const next = times[i + 1];
      if (next !== undefined && next < windowEnd) latencies.push(next - t);
    });
  }
  const elapsedMs = last.at - first.at;
  const stepsPerSec = inWindow / ((windowEnd - windowStart) / 1_000);
  const msPerStep = (pct: number) => round((pct * 10) / stepsPerSec, 1);
  const cpuPct = (micros: number) => round(micros / 1_000 / elapsedMs * 100, 1);
  const workerCpu = (s: WorkerStats) => s.cpuUserMicros + s.cpuSystemMicros;
  const benchCpu = (c: NodeJS.CpuUsage) => c.user + c.system;
  const workerCpuPct = cpuPct(workerCpu(last.worker) - workerCpu(first.worker));
  const serverCpuPct = first.server === undefined || last.server === undefined ? null : round((last.server - first.server) / elapsedMs * 100, 1);
  return {
    stepsPerSec: round(stepsPerSec, 1),
    p50StepMs: percentile(latencies, 50),
    p95StepMs: percentile(latencies, 95),
    workerCpuPct,
    benchCpuPct: cpuPct(benchCpu(last.bench) - benchCpu(first.bench)),
    serverCpuPct,
    workerRssMb: round(last.worker.rssBytes / MB, 1),
    workerCpuMsPerStep: msPerStep(workerCpuPct),
    serverCpuMsPerStep: serverCpuPct === null ? null : msPerStep(serverCpuPct),
  };
}

/** Each session's step start times: LLM request arrivals for the agent and the I/O floor, probe times for the floor. */
async function stepStarts(env: BenchEnv, worker: BenchWorker, workflow: LoadWorkflow, sessions: readonly string[]): Promise<number[][]> {
  if (workflow === 'floor') {
    const probes = await worker.probes();
    return sessions.map((id) => probes[id] ?? []);
  }
  const byModel = new Map<string, number[]>();
  for (const request of env.llm.requests()) {
    const times = byModel.get(request.model) ?? [];
    times.push(request.at);
    byModel.set(request.model, times);
  }
  return sessions.map((model) => byModel.get(model) ?? []);
}

/**
 * Benchmark 2: raises concurrency until steps/s stops rising, for the three workflows, level
 * by level in turn (floor, I/O floor, then agent, at each concurrency) so that a noisy
 * stretch on a shared machine hits them alike. For each, a level that does not beat its best by 5 %
 * is a miss, and two misses in a row end its search: one miss alone can be noise.
 */
export async function measureSaturation(
  env: BenchEnv,
  workers: { agent: BenchWorker; floor: BenchWorker },
  concurrencies: readonly number[],
  settings: LoadSettings,
): Promise<{ agent: SaturationResult; floor: SaturationResult; ioFloor: SaturationResult }> {
  const searches = (['floor', 'io-floor', 'agent'] as const).map((kind) => ({ kind, worker: kind === 'agent' ? workers.agent : workers.floor, levels: [] as LevelResult[], peak: undefined as LevelResult | undefined, misses: 0 }));
  for (const concurrency of concurrencies) {
    const rising = searches.filter((s) => s.misses < 2);
    if (rising.length === 0) break;
    for (const search of rising) {
      const level = await runLevel(env, search.worker, concurrency, settings, search.kind);
      search.levels.push(level);
      if (!search.peak || level.stepsPerSec > search.peak.stepsPerSec * RISE) {
        search.peak = level;
        search.misses = 0;
      } else {
        if (level.stepsPerSec > search.peak.stepsPerSec) search.peak = level;
        search.misses++;
      }
    }
  }
  const result = (kind: LoadWorkflow): SaturationResult => {
    const search = searches.find((s) => s.kind === kind);
    if (!search?.peak) throw new Error('bench: no concurrency level to measure');
    return { workflow: kind, levels: search.levels, peak: search.peak };
  };
  return { agent: result('agent'), floor: result('floor'), ioFloor: result('io-floor') };
}
