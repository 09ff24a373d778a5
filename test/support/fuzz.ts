/**
 * How every property-based fuzzer of a trust boundary runs (fast-check). CI runs each one
 * seeded and bounded, so a run is repeatable and short; `npm run test:fuzz` runs the same
 * properties with many more cases and a fresh seed. A failure names its seed and path, so
 * `FUZZ_SEED=<seed> FUZZ_PATH=<path> npx vitest run <file>` replays exactly that case.
 *
 * - `FUZZ_RUNS`: cases per property (default: the property's own CI count).
 * - `FUZZ_SEED`: the seed (default 20261201, fixed; `random` for a new one each run).
 * - `FUZZ_PATH`: the shrink path fast-check printed, to replay one counterexample.
 */
import fc from 'fast-check';

const DEFAULT_SEED = 20261201;

export interface FuzzRun {
  seed: number;
  numRuns: number;
  path?: string;
}

/**
 * The parameters of one property's run: `ciRuns` cases in CI, `FUZZ_RUNS` when set, but
 * never more than `maxRuns`, for a property whose case is a whole process (seconds each).
 */
export function fuzzRun(ciRuns: number, maxRuns = Number.POSITIVE_INFINITY): FuzzRun {
  const seedSetting = process.env.FUZZ_SEED;
  const seed =
    seedSetting === undefined || seedSetting === ''
      ? DEFAULT_SEED
      : seedSetting === 'random'
        ? Math.floor(Math.random() * 0x7fffffff)
        : Number.parseInt(seedSetting, 10);
  if (!Number.isSafeInteger(seed)) throw new Error(`FUZZ_SEED must be an integer or "random", got ${JSON.stringify(seedSetting)}`);
  const runsSetting = process.env.FUZZ_RUNS;
  const asked = runsSetting === undefined || runsSetting === '' ? ciRuns : Number.parseInt(runsSetting, 10);
  if (!Number.isSafeInteger(asked) || asked < 1) throw new Error(`FUZZ_RUNS must be a positive integer, got ${JSON.stringify(runsSetting)}`);
  const numRuns = Math.min(asked, maxRuns);
  const path = process.env.FUZZ_PATH;
  return { seed, numRuns, ...(path ? { path } : {}) };
}

/**
 * `fc.assert` with the run's seed and count. fast-check's own failure message already
 * carries `seed` and `path`; this adds the command that replays it.
 */
export async function assertProperty<Ts extends [unknown, ...unknown[]]>(
  ciRuns: number,
  property: fc.IAsyncPropertyWithHooks<Ts> | fc.IPropertyWithHooks<Ts>,
  options: { maxRuns?: number } = {},
): Promise<void> {
  const run = fuzzRun(ciRuns, options.maxRuns);
  try {
    await fc.assert(property as fc.IAsyncPropertyWithHooks<Ts>, { seed: run.seed, numRuns: run.numRuns, ...(run.path ? { path: run.path } : {}) });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const path = /path: "([^"]*)"/.exec(message)?.[1];
    throw new Error(`${message}\nreplay: FUZZ_SEED=${run.seed}${path ? ` FUZZ_PATH=${path}` : ''} npx vitest run <this file>`, { cause: error });
  }
}
