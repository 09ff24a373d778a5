import { z } from 'zod';

/**
 * The messages between the benchmark and its worker process (bench/worker-child.ts).
 * The worker runs in a process of its own so that its CPU time and RSS are its own, not
 * the benchmark client's or the scripted LLM's. Both sides parse what they receive: an
 * IPC channel is a boundary like any other.
 */

/** The worker options the benchmark varies; absent ones keep their defaults. */
export const WorkerTuningSchema = z
  .object({
    maxCachedWorkflows: z.number().int().nonnegative(),
    maxConcurrentActivityTaskExecutions: z.number().int().positive(),
    maxConcurrentWorkflowTaskExecutions: z.number().int().min(2),
    maxConcurrentWorkflowTaskPolls: z.number().int().min(2),
    maxConcurrentActivityTaskPolls: z.number().int().positive(),
    nonStickyToStickyPollRatio: z.number().min(0).max(1),
    /** 0 turns eager activity execution off on the worker's side (the server has its own switch). */
    maxEagerActivityReservationsPerWorkflowTask: z.number().int().nonnegative(),
  })
  .partial()
  .strict();
export type WorkerTuning = z.infer<typeof WorkerTuningSchema>;

export const WorkerChildConfigSchema = z.strictObject({
  /** `agent`: the real session workflow and activities; `floor`: bench/floor. */
  kind: z.enum(['agent', 'floor']),
  address: z.string().min(1),
  namespace: z.string().min(1),
  taskQueue: z.string().min(1),
  /** A prebuilt workflow bundle, so no worker spends seconds bundling inside a measurement. */
  bundlePath: z.string().min(1),
  /** The scripted LLM, for `agent`. */
  llmUrl: z.string().url().optional(),
  workspaceDir: z.string().min(1),
  tuning: WorkerTuningSchema,
  /** The SDK's own metrics (Prometheus, on 127.0.0.1): the sticky cache's hits and misses (bench/open-sessions.ts). */
  metricsPort: z.number().int().positive().optional(),
});
export type WorkerChildConfig = z.infer<typeof WorkerChildConfigSchema>;

export const WorkerStatsSchema = z.strictObject({
  /** process.cpuUsage(): every thread of the process, the Rust core's included. */
  cpuUserMicros: z.number(),
  cpuSystemMicros: z.number(),
  rssBytes: z.number(),
  heapUsedBytes: z.number(),
  cachedWorkflows: z.number(),
});
export type WorkerStats = z.infer<typeof WorkerStatsSchema>;

export const WorkerRequestSchema = z.strictObject({
  id: z.number().int(),
  /** `gc` collects garbage first (the process runs with --expose-gc), then reports stats. */
  type: z.enum(['stats', 'gc', 'probes', 'stop']),
});
export type WorkerRequest = z.infer<typeof WorkerRequestSchema>;

export const WorkerMessageSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('ready') }),
  z.strictObject({ type: z.literal('fatal'), message: z.string() }),
  z.strictObject({ type: z.literal('stats'), id: z.number().int(), stats: WorkerStatsSchema }),
  /** Floor step start times by workflow id; drained by the request. */
  z.strictObject({ type: z.literal('probes'), id: z.number().int(), probes: z.record(z.string(), z.array(z.number())) }),
  z.strictObject({ type: z.literal('stopped'), id: z.number().int() }),
]);
export type WorkerMessage = z.infer<typeof WorkerMessageSchema>;
