import { z } from 'zod';

/** The worker process's memory at one point of the long session, after a full garbage collection. */
const MemoryPointSchema = z.strictObject({ atTurn: z.number().int(), rssMb: z.number(), heapMb: z.number() });

/** One run of the session: what its Temporal history holds. */
const RunPointSchema = z.strictObject({
  run: z.number().int(),
  /** Step LLM calls whose activity this run scheduled (compaction calls are counted apart). */
  steps: z.number().int(),
  compactions: z.number().int(),
  historyEvents: z.number().int(),
  /** The run's history as JSON (`historyToJSON`). */
  historyBytes: z.number().int(),
  historyBytesPerStep: z.number(),
  /** Its input: the settings and the log's tail carried from the run before. */
  inputBytes: z.number().int(),
});

/** bench/long-session.ts: a session of hundreds of turns reading large tool results, across runs. */
export const LongSessionResultSchema = z.strictObject({
  settings: z.strictObject({
    turns: z.number().int(),
    toolResultBytes: z.number().int(),
    contextWindow: z.number().int(),
    compactAt: z.number(),
    continueAsNewAfterEvents: z.number().int(),
  }),
  durationS: z.number(),
  /** Every turn answered, and the log read across the runs holds every turn once, in order. */
  ranToEnd: z.boolean(),
  turnsAnswered: z.number().int(),
  runs: z.number().int(),
  log: z.strictObject({ events: z.number().int(), bytes: z.number().int(), compactions: z.number().int() }),
  /** What the scripted LLM received, in its own count (JSON characters / 4). */
  requests: z.strictObject({
    steps: z.number().int(),
    compactions: z.number().int(),
    largestTokens: z.number().int(),
    /** Requests above the window, refused as the provider would (`over_window`): must be 0. */
    overWindow: z.number().int(),
  }),
  perRun: z.array(RunPointSchema).min(1),
  memory: z.array(MemoryPointSchema).min(1),
});
export type LongSessionResult = z.infer<typeof LongSessionResultSchema>;
export type LongSessionSettings = LongSessionResult['settings'];
