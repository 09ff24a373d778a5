import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest (seconds on this 2-core machine, from a CI run's report of
 * 2026-12-01), started first. Vitest orders a clean clone's files by size, which says
 * little about time here (a small file can wait a minute on servers and retries), so a
 * long file could start last and leave one fork idle for its whole run. A file missing
 * from the list runs after them, in vitest's own order: a stale list costs time, never a test.
 */
const SLOWEST = [
  'bench-compare.test.ts', // 89
  'client-errors.test.ts', // 79
  'replay-bites.test.ts', // 64
  'llm-retries.test.ts', // 53
  'start.test.ts', // 53
  'client-settings-refusals.test.ts', // 50
  'docs-commands.test.ts', // 49
  'tracing.test.ts', // 46
  'mcp-crash.test.ts', // 44
  'connection-tls.test.ts', // 42
  'mcp-http.test.ts', // 41
  'soak.test.ts', // 41
  'client-run.test.ts', // 37
  'namespace-check.test.ts', // 37
  'client-settings.test.ts', // 35
  'ladder-departures.test.ts', // 33
  'encryption.test.ts', // 33
  'many-workers.test.ts', // 30
  'approval.test.ts', // 30
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
