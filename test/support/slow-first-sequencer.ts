import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest (seconds on this 2-core machine, from the clean-clone CI run
 * of 2026-12-01), started first. Vitest orders a clean clone's files by size, which says
 * little about time here (a small file can wait a minute on servers and retries), so a
 * long file could start last and leave one fork idle for its whole run. A file missing
 * from the list runs after them, in vitest's own order: a stale list costs time, never a test.
 * The CLI files (~) run most of their command lines in-process since 2026-12-02: their
 * figures are that run's scaled by each file's time beside its old version on one
 * machine, or less the process starts it no longer makes (about 1.3 s each),
 * and the session API's new files (?) are placed by their size; a CI run's
 * test-results/vitest.json gives the next figures.
 */
const SLOWEST = [
  'bench-compare.test.ts', // 84
  'bench.test.ts', // 70
  'llm-retries.test.ts', // 60
  'tracing.test.ts', // 55
  'connection-tls.test.ts', // 50
  'start.test.ts', // 49
  'chat-page.test.ts', // ? Chromium, a gateway and a worker process
  'mcp-crash.test.ts', // 45
  'compiled-worker.test.ts', // 45
  'docs-commands.test.ts', // 44
  'package.test.ts', // 40
  'replay-bites.test.ts', // 37
  'client-errors.test.ts', // ~36
  'namespace-check.test.ts', // 35
  'encryption.test.ts', // 35
  'ladder-departures.test.ts', // 35
  'client-watch.test.ts', // 34
  'mcp-http.test.ts', // ~32
  'gateway-openai.test.ts', // ? a gateway and a worker process
  'gateway-events-broker.test.ts', // ? a NATS server, restarted
  'worker-shutdown.test.ts', // 29
  'mcp-hostile.test.ts', // 28
  'gateway-sessions.test.ts', // ?
  'gateway-events.test.ts', // ?
  'live-stream.test.ts', // ?
  'many-workers.test.ts', // 25
  'client-settings.test.ts', // ~22
  'client-run.test.ts', // ~20
  'client-log-chain.test.ts', // ~18
  'approval.test.ts', // ~17
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
