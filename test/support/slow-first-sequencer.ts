import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest (seconds on this 2-core machine, from a full `npm test` of
 * 2026-12-01), started first. Vitest orders a clean clone's files by size, which says
 * little about time here (a small file can wait a minute on servers and retries), so a
 * long file could start last and leave one fork idle for its whole run. A file missing
 * from the list runs after them, in vitest's own order: a stale list costs time, never a test.
 */
const SLOWEST = [
  'client-errors.test.ts', // 79
  'bench-compare.test.ts', // 75
  'bench.test.ts', // 70
  'llm-retries.test.ts', // 61
  'client-settings-refusals.test.ts', // 57
  'tracing.test.ts', // 53
  'soak.test.ts', // 45
  'mcp-crash.test.ts', // 44
  'mcp-http.test.ts', // 44
  'package.test.ts', // 40
  'client-settings.test.ts', // 40
  'docs-commands.test.ts', // 39
  'connection-tls.test.ts', // 38
  'approval.test.ts', // 38
  'ladder-departures.test.ts', // 37
  'compiled-worker.test.ts', // 37
  'start.test.ts', // 36
  'client-watch.test.ts', // 35
  'replay-bites.test.ts', // 33
  'mcp-hostile.test.ts', // 32
  'provider-fidelity-sessions.test.ts', // 31
  'namespace-check.test.ts', // 30
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
