import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest (seconds on this 2-core machine, from the clean-clone CI run
 * of 2026-12-01), started first. Vitest orders a clean clone's files by size, which says
 * little about time here (a small file can wait a minute on servers and retries), so a
 * long file could start last and leave one fork idle for its whole run. A file missing
 * from the list runs after them, in vitest's own order: a stale list costs time, never a test.
 */
const SLOWEST = [
  'client-errors.test.ts', // 86
  'bench-compare.test.ts', // 84
  'bench.test.ts', // 70
  'client-settings-refusals.test.ts', // 61
  'llm-retries.test.ts', // 60
  'tracing.test.ts', // 55
  'connection-tls.test.ts', // 50
  'start.test.ts', // 49
  'client-settings.test.ts', // 49
  'mcp-crash.test.ts', // 45
  'compiled-worker.test.ts', // 45
  'docs-commands.test.ts', // 44
  'mcp-http.test.ts', // 41
  'approval.test.ts', // 41
  'package.test.ts', // 40
  'replay-bites.test.ts', // 37
  'namespace-check.test.ts', // 35
  'encryption.test.ts', // 35
  'ladder-departures.test.ts', // 35
  'client-watch.test.ts', // 34
  'client-session.test.ts', // 31
  'client-log-chain.test.ts', // 30
  'worker-shutdown.test.ts', // 29
  'mcp-hostile.test.ts', // 28
  'client-run.test.ts', // 28
  'many-workers.test.ts', // 25
];

export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const at = SLOWEST.findIndex((name) => spec.moduleId.endsWith(`/test/${name}`));
      return at === -1 ? SLOWEST.length : at;
    };
    // Array.prototype.sort is stable: the rest keep vitest's order.
    return [...ordered].sort((a, b) => rank(a) - rank(b));
  }
}
