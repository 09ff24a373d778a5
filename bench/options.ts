import { z } from 'zod';
import type { LongSessionSettings } from './long-session-result';
import type { ReplayCompareSettings } from './replay-compare';
import type { StreamSettings } from './stream-result';

/**
 * How big each measurement is. `full` is what `npm run bench` runs (minutes) and what the
 * bench/README.md's table comes from; `quick` is the same code at a scale that fits a CI
 * job (about a minute), so its numbers are a smoke test, not a result; `smoke` is the least
 * each measurement can be built from (the tests of the benchmark's plumbing run it): its
 * numbers mean nothing, only that every part ran and reported.
 */
export interface BenchScale {
  overhead: { steps: number; runs: number; warmupRuns: number };
  throughput: {
    stepsPerSession: number;
    /** Raised in this order until steps/s stops rising. */
    concurrency: number[];
    warmupMs: number;
    windowMs: number;
  };
  /** Session lengths whose history is measured; the ratio is last / `ratioBase`. */
  history: { steps: number[]; ratioBase: number; ratioTop: number };
  replay: { runs: number };
  memory: { sessions: number; stepsPerSession: number };
  /** The worker-option sweep; skipped when absent. */
  sweep?: { runs: number; steps: number; windowMs: number };
  /** A session of hundreds of turns that compacts and continues as new; skipped when absent. */
  longSession?: LongSessionSettings;
  /** `--compare REV --replay`: blocks of replays of the recorded histories under each bundle. */
  replayCompare: ReplayCompareSettings;
  /** `--only stream`: following a session live (bench/stream.ts). */
  stream: StreamSettings;
  /** Timed starts of each command the CLI's start-up is measured with (bench/cli-speed.ts). */
  cli: { runs: number };
  /**
   * Take the working tree's session workflow bundle from the tests' cache
   * (harness/workflow-bundle-cache.ts, one per content of the workflows) instead of bundling
   * it here: webpack's seconds are never measured, and a test run has that bundle already.
   */
  cachedBundle: boolean;
}

export const SCALE_NAMES = ['full', 'quick', 'smoke'] as const;
export type ScaleName = (typeof SCALE_NAMES)[number];

export const SCALES: Record<ScaleName, BenchScale> = {
  full: {
    overhead: { steps: 21, runs: 15, warmupRuns: 3 },
    throughput: { stepsPerSession: 10, concurrency: [1, 2, 4, 8, 16, 32, 64, 128], warmupMs: 2_000, windowMs: 8_000 },
    history: { steps: [10, 20, 50, 200], ratioBase: 20, ratioTop: 200 },
    replay: { runs: 7 },
    memory: { sessions: 200, stepsPerSession: 3 },
    sweep: { runs: 5, steps: 11, windowMs: 6_000 },
    // About 6 MiB of log: 300 turns reading 20 KiB each, under a 32 000-token window.
    longSession: { turns: 300, toolResultBytes: 20 * 1024, contextWindow: 32_000, compactAt: 0.75, continueAsNewAfterEvents: 2_000 },
    replayCompare: { rounds: 8, replaysPerBlock: 40 },
    // About 50 tokens a second, as a fast model streams: 4 s and 16 s of text.
    stream: { pieces: 200, chunkSize: 4, pieceDelayMs: 20, viewers: [1, 10, 100], longPieces: 800, transports: ['embedded', 'nats'], hopFrames: 2_000 },
    cli: { runs: 5 },
    cachedBundle: false,
  },
  quick: {
    overhead: { steps: 6, runs: 3, warmupRuns: 1 },
    throughput: { stepsPerSession: 10, concurrency: [1, 4], warmupMs: 500, windowMs: 1_500 },
    history: { steps: [5, 50], ratioBase: 5, ratioTop: 50 },
    replay: { runs: 2 },
    memory: { sessions: 10, stepsPerSession: 2 },
    // Seconds: four runs and a few compactions, the same code as the full case.
    longSession: { turns: 24, toolResultBytes: 20 * 1024, contextWindow: 32_000, compactAt: 0.75, continueAsNewAfterEvents: 200 },
    replayCompare: { rounds: 2, replaysPerBlock: 4 },
    stream: { pieces: 10, chunkSize: 4, pieceDelayMs: 10, viewers: [1, 2], longPieces: 30, transports: ['embedded'], hopFrames: 50 },
    cli: { runs: 5 },
    cachedBundle: false,
  },
  smoke: {
    // One measured turn of two steps: one step latency per loop.
    overhead: { steps: 2, runs: 1, warmupRuns: 0 },
    // Two levels, so the search still raises the concurrency, each of three short windows.
    throughput: { stepsPerSession: 4, concurrency: [1, 2], warmupMs: 300, windowMs: 400 },
    // Linear growth is told from quadratic only between lengths ten times apart.
    history: { steps: [5, 50], ratioBase: 5, ratioTop: 50 },
    replay: { runs: 1 },
    memory: { sessions: 3, stepsPerSession: 1 },
    // The quick one: fewer runs would leave no run between the first and the last whose
    // history per step could be compared, and fewer turns per run make that figure noise.
    longSession: { turns: 24, toolResultBytes: 20 * 1024, contextWindow: 32_000, compactAt: 0.75, continueAsNewAfterEvents: 200 },
    // Two rounds, so each bundle's block goes first once.
    replayCompare: { rounds: 2, replaysPerBlock: 1 },
    // Two viewer counts, so watch's cost is seen to grow with them.
    stream: { pieces: 4, chunkSize: 4, pieceDelayMs: 10, viewers: [1, 2], longPieces: 8, transports: ['embedded'], hopFrames: 10 },
    cli: { runs: 1 },
    cachedBundle: true,
  },
};

export const BenchArgsSchema = z.strictObject({
  /** `--quick` or `--smoke`; `full` without either. */
  scale: z.enum(SCALE_NAMES),
  /** `--no-sweep`: skip the worker-option sweep, the longest part, e.g. to check a change's effect on the rest. */
  sweep: z.boolean(),
  /**
   * `--cpu-prof DIR`: every worker process writes V8 CPU profiles there (one per thread;
   * the workflow thread is its own), for Chrome DevTools or speedscope. Profiling slows
   * the workers: its run's numbers show where time goes, not how much there is.
   */
  cpuProf: z.string().min(1).optional(),
  /** Where to write the JSON instead of bench/results/bench-<scale>-<date>.json. */
  out: z.string().min(1).optional(),
  /**
   * `--only long-session`: run that one benchmark of the scale, by itself (minutes instead of
   * the whole run's tens); `--only stream`: the live stream's cost and latency (bench/stream.ts);
   * `--only limits`: the fleet limits with and without a shared limit, and their cost (bench/limits.ts);
   * `--only actions`: a session's billable actions, metered and from its history (bench/actions.ts);
   * `--only sessions`: thousands of open sessions on one worker (bench/open-sessions.ts).
   */
  only: z.enum(['long-session', 'stream', 'limits', 'actions', 'sessions']).optional(),
  /**
   * `--compare REV`: only the per-step comparison of the session workflow at a git revision
   * with the working tree's, the floor beside them, interleaved turn by turn (bench/compare.ts).
   */
  compare: z.string().min(1, { error: '--compare needs a git revision, such as HEAD~1' }).optional(),
  /**
   * `--replay`, with `--compare REV`: the workflow's own CPU only, from replays of the
   * recorded histories under each bundle, with no server (bench/replay-compare.ts).
   */
  replay: z.boolean(),
  /**
   * `--histories DIR`, with `--replay`: the histories to replay instead of the recorded
   * goldens (test/fixtures/histories), such as sessions exported with `agent history --out`.
   */
  histories: z.string().min(1, { error: '--histories needs a folder' }).optional(),
  /**
   * Extra dynamic config for the benchmark's dev server, over the project's own
   * (DEFAULT_DYNAMIC_CONFIG), e.g. to measure a server setting before adopting it.
   */
  serverConfig: z.record(z.string(), z.unknown()),
});
export type BenchArgs = z.infer<typeof BenchArgsSchema>;

const USAGE = 'accepted: --quick, --smoke, --no-sweep, --only long-session|stream|limits|actions|sessions, --compare REV [--replay [--histories DIR]], --out FILE, --cpu-prof DIR, --server-config KEY=JSON (repeatable)';

/** `--quick`, `--smoke`, `--no-sweep`, `--only NAME`, `--compare REV [--replay [--histories DIR]]`, `--out FILE`, `--cpu-prof DIR`, `--server-config KEY=JSON`; anything else is an error that names it. */
export function parseBenchArgs(argv: readonly string[]): BenchArgs {
  const serverConfig: Record<string, unknown> = {};
  const raw: Record<string, unknown> = { scale: 'full', sweep: true, replay: false, serverConfig };
  const scales = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--quick' || arg === '--smoke') {
      scales.add(arg);
      raw.scale = arg.slice('--'.length);
    } else if (arg === '--no-sweep') raw.sweep = false;
    else if (arg === '--out') raw.out = argv[++i];
    else if (arg?.startsWith('--out=')) raw.out = arg.slice('--out='.length);
    else if (arg === '--cpu-prof') raw.cpuProf = argv[++i];
    else if (arg === '--only') raw.only = argv[++i];
    else if (arg === '--compare') raw.compare = argv[++i] ?? '';
    else if (arg === '--replay') raw.replay = true;
    else if (arg === '--histories') raw.histories = argv[++i] ?? '';
    else if (arg === '--server-config') {
      const pair = argv[++i] ?? '';
      const eq = pair.indexOf('=');
      if (eq <= 0) throw new Error(`bench: --server-config wants KEY=JSON, got "${pair}"`);
      try {
        serverConfig[pair.slice(0, eq)] = JSON.parse(pair.slice(eq + 1));
      } catch {
        throw new Error(`bench: --server-config ${pair.slice(0, eq)}: the value is not JSON (strings need quotes)`);
      }
    } else throw new Error(`bench: unknown argument "${arg}" (${USAGE})`);
  }
  if (scales.size > 1) throw new Error('bench: --quick and --smoke are two scales: give one');
  const parsed = BenchArgsSchema.safeParse(raw);
  if (!parsed.success) throw new Error(`bench: ${z.prettifyError(parsed.error)}`);
  if (parsed.data.replay && parsed.data.compare === undefined) throw new Error('bench: --replay goes with --compare REV (it compares two bundles)');
  if (parsed.data.histories !== undefined && !parsed.data.replay) throw new Error('bench: --histories goes with --compare REV --replay (it names what is replayed)');
  return parsed.data;
}
