import { z } from 'zod';
import type { ActionsResult } from './actions-result';
import { LongSessionResultSchema } from './long-session-result';
import type { OpenSessionsResult } from './open-sessions-result';
import { SCALE_NAMES } from './options';

/**
 * The JSON `npm run bench` writes to bench/results/. A schema rather than only a type:
 * test/bench.test.ts reads the file back through it, and so can any tool that compares runs.
 * Latencies are milliseconds; a percentile of no samples is null.
 */

const ms = z.number().nullable();

const LatencySummarySchema = z.strictObject({ n: z.number().int(), p50: ms, p95: ms, runP50s: z.array(ms) });

const LevelSchema = z.strictObject({
  concurrency: z.number().int().positive(),
  /** The median window's; `windowStepsPerSec` has every window's, in order. */
  stepsPerSec: z.number(),
  windowStepsPerSec: z.array(z.number()).min(1),
  p50StepMs: ms,
  p95StepMs: ms,
  sessions: z.number().int(),
  workerCpuPct: z.number(),
  benchCpuPct: z.number(),
  serverCpuPct: z.number().nullable(),
  workerRssMb: z.number(),
  workerCpuMsPerStep: z.number().nullable(),
  serverCpuMsPerStep: z.number().nullable(),
});

const StepAnatomySchema = z.strictObject({
  workflowTasksPerStep: z.number(),
  eventsPerStep: z.number(),
  workflowTaskDispatchMs: ms,
  workflowTaskRunMs: ms,
  llmActivityDispatchMs: ms,
  llmActivityRunMs: ms,
  llmStartToRequestMs: ms,
  llmRequestMs: ms,
  toolActivitiesRunMs: ms,
});

const SaturationSchema = z.strictObject({ workflow: z.enum(['agent', 'floor', 'io-floor']), levels: z.array(LevelSchema).min(1), peak: LevelSchema });

export const TargetSchema = z.strictObject({
  name: z.string(),
  value: z.number().nullable(),
  /** Human-readable, e.g. `≤ 1.2`. */
  target: z.string(),
  met: z.boolean(),
});
export type Target = z.infer<typeof TargetSchema>;

export const BenchResultSchema = z.strictObject({
  scale: z.enum(SCALE_NAMES),
  machine: z.strictObject({
    date: z.string(),
    nproc: z.number().int(),
    cpuModel: z.string(),
    memTotalGb: z.number(),
    memFreeGb: z.number(),
    node: z.string(),
    platform: z.string(),
    /** 1/5/15-minute load averages before and after: a busy machine explains odd numbers. */
    loadBefore: z.array(z.number()),
    loadAfter: z.array(z.number()),
  }),
  /** The dev server: its version and every dynamic config value it ran with. */
  server: z.strictObject({ version: z.string(), dynamicConfig: z.record(z.string(), z.unknown()) }),
  bundlingMs: z.number(),
  durationS: z.number(),
  overhead: z.strictObject({
    settings: z.strictObject({ steps: z.number().int(), runs: z.number().int(), warmupRuns: z.number().int() }),
    plain: LatencySummarySchema,
    temporal: LatencySummarySchema,
    floor: LatencySummarySchema,
    ioFloor: LatencySummarySchema,
    temporalToIoFloor: z.number().nullable(),
    overheadP50Ms: ms,
    overheadP95Ms: ms,
    overheadToFloor: z.number().nullable(),
    temporalToFloor: z.number().nullable(),
    turnMsPerStep: z.strictObject({ plain: ms, temporal: ms, floor: ms, ioFloor: ms }),
    plainCpuMsPerStep: z.number(),
    anatomy: z.strictObject({ temporal: StepAnatomySchema, floor: StepAnatomySchema }),
  }),
  throughput: z.strictObject({
    stepsPerSession: z.number().int(),
    agent: SaturationSchema,
    floor: SaturationSchema,
    /** agent peak steps/s ÷ floor peak steps/s. */
    agentToFloor: z.number(),
    ioFloor: SaturationSchema,
    /** agent peak steps/s ÷ the I/O floor's peak (target ≥ 0.85). */
    agentToIoFloor: z.number(),
  }),
  history: z.strictObject({
    points: z.array(z.strictObject({ steps: z.number().int(), events: z.number().int(), bytes: z.number().int(), bytesPerStep: z.number() })).min(2),
    ratio: z.strictObject({ base: z.number(), top: z.number(), value: z.number(), linear: z.number(), quadratic: z.number() }),
    marginalBytesPerStep: z.strictObject({ first: z.number(), last: z.number() }),
    breakdown: z.array(z.strictObject({ eventType: z.string(), count: z.number().int(), bytes: z.number().int() })),
  }),
  replay: z.strictObject({
    steps: z.number().int(),
    events: z.number().int(),
    runs: z.number().int(),
    medianMs: ms,
    maxMs: ms,
    succeeded: z.boolean(),
    error: z.string().optional(),
  }),
  memory: z.strictObject({
    sessions: z.number().int(),
    stepsPerSession: z.number().int(),
    cachedWorkflows: z.number().int(),
    baselineRssMb: z.number(),
    rssPerSessionKb: z.number(),
    heapPerSessionKb: z.number(),
    afterTurnRssPerSessionKb: z.number(),
    afterTurnHeapPerSessionKb: z.number(),
  }),
  /** Whole-process wall time from spawn to exit, median of `runs` (bench/cli-speed.ts). */
  cli: z.strictObject({
    runs: z.number().int(),
    agentHelpMs: z.number(),
    agentListMs: z.number(),
    temporalHelpMs: z.number(),
    fastest: z.strictObject({ agentHelpMs: z.number(), agentListMs: z.number(), temporalHelpMs: z.number() }),
  }),
  /** bench/long-session.ts; absent in `--quick`. */
  longSession: LongSessionResultSchema.optional(),
  /** Absent in `--quick`. */
  workerOptions: z
    .array(
      z.strictObject({
        option: z.string(),
        value: z.string(),
        tuning: z.record(z.string(), z.number()),
        serverConfig: z.record(z.string(), z.unknown()),
        stepP50Ms: ms,
        stepP95Ms: ms,
        concurrency: z.number().int(),
        stepsPerSec: z.number(),
        loadP95StepMs: ms,
        workerCpuPct: z.number(),
        workerRssMb: z.number(),
        error: z.string().optional(),
      }),
    )
    .optional(),
  /** A session's billable actions (bench/actions.ts), beside the rest at `full` and `quick`; its shape is the `--only actions` report's. */
  actions: z.custom<ActionsResult>((value) => typeof value === 'object' && value !== null && 'session' in value).optional(),
  /** Open sessions on one worker (bench/open-sessions.ts), likewise. */
  sessions: z.custom<OpenSessionsResult>((value) => typeof value === 'object' && value !== null && 'evictedDeep' in value).optional(),
  targets: z.array(TargetSchema),
});
export type BenchResult = z.infer<typeof BenchResultSchema>;

