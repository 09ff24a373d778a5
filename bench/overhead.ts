import type { BenchEnv } from './bench-env';
import { runPlainTurn, type PlainLoopDeps } from './plain-loop';
import { llmStepStarts, scriptTurn, uniqueModel } from './scripted-turn';
import { stepAnatomy, type StepAnatomy } from './step-anatomy';
import { intervals, median, round, summarizeRuns, type LatencySummary } from './stats';
import { endSession, runFloor, runIoFloor, runSessionTurn } from './temporal-runs';
import type { BenchWorker } from './worker-handle';

export interface OverheadSettings {
  /** Steps per turn; a turn yields `steps - 1` step latencies (the time between two step starts). */
  steps: number;
  runs: number;
  /** Runs of each loop before measuring: JIT, connection pools and the worker's caches warm up. */
  warmupRuns: number;
}

export interface OverheadResult {
  settings: OverheadSettings;
  plain: LatencySummary;
  temporal: LatencySummary;
  floor: LatencySummary;
  /** The floor that does the agent's I/O (bench/floor/io-activities.ts): its LLM request and stream, its tools. */
  ioFloor: LatencySummary;
  /** temporal p50 / I/O floor p50: the agent's orchestration as a multiple of the least a workflow doing its I/O takes (target ≤ 1.15). */
  temporalToIoFloor: number;
  /** What Temporal adds to the same work: temporal p50 − plain p50 (target ≤ 25 ms). */
  overheadP50Ms: number;
  overheadP95Ms: number;
  /** overheadP50Ms / floor p50: our overhead as a multiple of the floor's (target ≤ 1.2). */
  overheadToFloor: number;
  /** temporal p50 / floor p50: the whole step against the floor's whole step. */
  temporalToFloor: number;
  /** Median over runs of (client-side turn time / steps): includes the `send` Update's round trip. */
  turnMsPerStep: { plain: number; temporal: number; floor: number; ioFloor: number };
  /**
   * CPU of this process per plain-loop step: the agent's own work (request body, SSE
   * parsing, tools) plus the scripted LLM's, which runs in this process too. What a step
   * costs with no Temporal at all; compare with the workers' CPU per step under load.
   */
  plainCpuMsPerStep: number;
  /** Where the time of a step goes, for each Temporal loop (see step-anatomy.ts). */
  anatomy: { temporal: StepAnatomy; floor: StepAnatomy };
}

/**
 * Benchmark 1: one turn at a time, the same turn three ways, interleaved run by run so a
 * noisy moment on the machine hits all three alike. A step's latency is the time from one
 * step's start to the next one's: for our loops the arrival of the LLM request at the
 * scripted LLM, for the floor the start of its stand-in activity.
 */
export async function measureOverhead(env: BenchEnv, workers: { agent: BenchWorker; floor: BenchWorker }, plain: PlainLoopDeps, settings: OverheadSettings): Promise<OverheadResult> {
  const samples = { plain: [] as number[][], temporal: [] as number[][], floor: [] as number[][], ioFloor: [] as number[][] };
  const perStep = { plain: [] as number[], temporal: [] as number[], floor: [] as number[], ioFloor: [] as number[] };
  const plainCpu: number[] = [];
  const measuredRuns = { sessions: [] as { workflowId: string; runId: string; model: string }[], floors: [] as string[] };
  await workers.floor.probes(); // drop anything earlier
  for (let run = 0; run < settings.warmupRuns + settings.runs; run++) {
    const measured = run >= settings.warmupRuns;

    const model = uniqueModel('plain');
    scriptTurn(env.llm, model, settings.steps);
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    const steps = await runPlainTurn(plain, model, 'Compute 6*7, 2^10 and sqrt(16).', settings.steps);
    const cpu = process.cpuUsage(cpuBefore);
    const plainMs = performance.now() - started;
    if (steps !== settings.steps) throw new Error(`the plain loop took ${steps} steps instead of ${settings.steps}`);

    const session = await runSessionTurn(env.client, env.llm, workers.agent.taskQueue, settings.steps);
    await endSession(session.handle);

    const floor = await runFloor(env.client, workers.floor.taskQueue, settings.steps);
    const floorStarts = (await workers.floor.probes())[floor.workflowId] ?? [];

    const ioFloor = await runIoFloor(env.client, env.llm, workers.floor.taskQueue, settings.steps);

    if (!measured) continue;
    samples.plain.push(intervals(llmStepStarts(env.llm, model)));
    samples.temporal.push(intervals(llmStepStarts(env.llm, session.model)));
    samples.floor.push(intervals(floorStarts));
    samples.ioFloor.push(intervals(llmStepStarts(env.llm, ioFloor.model)));
    perStep.plain.push(plainMs / settings.steps);
    plainCpu.push((cpu.user + cpu.system) / 1_000 / settings.steps);
    perStep.temporal.push(session.turnMs / settings.steps);
    perStep.floor.push(floor.turnMs / settings.steps);
    perStep.ioFloor.push(ioFloor.turnMs / settings.steps);
    measuredRuns.sessions.push({ workflowId: session.handle.workflowId, runId: session.runId, model: session.model });
    measuredRuns.floors.push(floor.workflowId);
  }
  const historyOf = (workflowId: string, runId?: string) => env.client.workflow.getHandle(workflowId, runId).fetchHistory();
  const anatomy = {
    temporal: stepAnatomy(
      await Promise.all(measuredRuns.sessions.map((s) => historyOf(s.workflowId, s.runId))),
      'callLlm',
      measuredRuns.sessions.map((s) => env.llm.requests({ model: s.model })),
    ),
    floor: stepAnatomy(await Promise.all(measuredRuns.floors.map((id) => historyOf(id))), 'floorLlm'),
  };
  for (const [loop, runs] of Object.entries(samples)) {
    for (const run of runs) {
      if (run.length !== settings.steps - 1) throw new Error(`${loop}: expected ${settings.steps - 1} step latencies per run, got ${run.length}`);
    }
  }
  const plainSummary = summarizeRuns(samples.plain);
  const temporal = summarizeRuns(samples.temporal);
  const floor = summarizeRuns(samples.floor);
  const ioFloorSummary = summarizeRuns(samples.ioFloor);
  const overheadP50Ms = round(temporal.p50 - plainSummary.p50);
  return {
    settings,
    plain: plainSummary,
    temporal,
    floor,
    ioFloor: ioFloorSummary,
    temporalToIoFloor: round(temporal.p50 / ioFloorSummary.p50),
    overheadP50Ms,
    overheadP95Ms: round(temporal.p95 - plainSummary.p95),
    overheadToFloor: round(overheadP50Ms / floor.p50),
    temporalToFloor: round(temporal.p50 / floor.p50),
    turnMsPerStep: { plain: round(median(perStep.plain)), temporal: round(median(perStep.temporal)), floor: round(median(perStep.floor)), ioFloor: round(median(perStep.ioFloor)) },
    plainCpuMsPerStep: round(median(plainCpu), 1),
    anatomy,
  };
}
