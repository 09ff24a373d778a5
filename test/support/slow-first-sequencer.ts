import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest (seconds of a full `npx vitest run` on this 2-core machine on
 * 2026-12-02 between 12:30 and 12:50 UTC, loaded by other work, so about 1.3-2 times a quiet
 * CI run's; the order is what counts), started first. Vitest orders a clean clone's files by
 * size, which says little about time here (a small file can wait a minute on servers and
 * retries), so a long file could start last and leave one fork idle for its whole run. A file
 * missing from the list runs after them, in vitest's own order: a stale list costs time,
 * never a test. A CI run's test-results/vitest.json gives the next figures.
 */
const SLOWEST = [
  'bench-compare.test.ts', // 206
  'bench.test.ts', // 150
  'tracing.test.ts', // 141
  'connection-tls.test.ts', // 105
  'package.test.ts', // 96
  'docs-commands.test.ts', // 77
  'llm-retries.test.ts', // 69
  'compiled-worker.test.ts', // 65
  'start.test.ts', // 62
  'replay-bites.test.ts', // 61
  'mcp-crash.test.ts', // 48
  'mcp-http.test.ts', // 35
  'mcp-hostile.test.ts', // 35
  'namespace-check.test.ts', // 35
  'ladder-departures.test.ts', // 33
  'encryption.test.ts', // 32
  'many-workers.test.ts', // 27
  'client-errors.test.ts', // 26
  'client-watch.test.ts', // 26
  'chat-page.test.ts', // 24
  'worker-shutdown.test.ts', // 24
  'client-settings.test.ts', // 23
  'bad-input.test.ts', // 19
  'mcp-tools.test.ts', // 19
  'client-log-chain.test.ts', // 15
  'custom-tools.test.ts', // 15
  'gateway-events.test.ts', // 12
  'client-run.test.ts', // 12
  'approval.test.ts', // 12
  'live-stream.test.ts', // 10
  'gateway-sessions.test.ts', // 10
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
