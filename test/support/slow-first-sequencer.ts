import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest, started first: seconds of each file (from its first test's start
 * to its last test's end, so without its first beforeAll) in the JSON report of a clean-clone
 * `.ci/run` on 2026-12-02 (a quiet machine, two forks, 960 s of tests), files of 8 s and more.
 * Vitest orders a clean clone's files by size, which says little about time here (a small file
 * can wait a minute on servers and retries), so a long file could start last and leave one fork
 * idle for its whole run. A file missing from the list runs after them, in vitest's own order: a
 * stale list costs time, never a test. A CI run's test-results/vitest.json gives the next figures.
 */
const SLOWEST = [
  // New in #31 and not in that report: two worker processes and SIGKILLs, about 60 to 90 s.
  'sub-agents-process.test.ts',
  'docs-commands.test.ts', // 69
  'tracing.test.ts', // 63
  'llm-retries.test.ts', // 60
  'replay-bites.test.ts', // 57
  'compiled-worker.test.ts', // 56
  'start.test.ts', // 51
  'bench-compare.test.ts', // 44
  'encryption.test.ts', // 40
  'mcp-crash.test.ts', // 38
  'mcp-http.test.ts', // 35
  'ladder-departures.test.ts', // 33
  'mcp-hostile.test.ts', // 31
  'bench-stream.test.ts', // 31
  'client-watch.test.ts', // 29
  'namespace-check.test.ts', // 28
  'connection-tls.test.ts', // 27
  'provider-fidelity-sessions.test.ts', // 27
  'custom-tools-process.test.ts', // 27
  'soak.test.ts', // 21
  'bad-input.test.ts', // 20
  'client-settings.test.ts', // 18
  'mcp-tools.test.ts', // 18
  'structured-output-cli.test.ts', // 17
  'fleet-limits.test.ts', // 17
  'many-workers.test.ts', // 16
  'client-errors.test.ts', // 16
  'client-log-chain.test.ts', // 16
  'custom-tools.test.ts', // 15
  'worker-shutdown.test.ts', // 14
  'client-session.test.ts', // 14
  'chat-page.test.ts', // 14
  'package.test.ts', // 14
  'ladder-time-skipping.test.ts', // 13
  'approval.test.ts', // 13
  'run-agent-test.test.ts', // 13
  'client-run.test.ts', // 12
  'compaction-recovery.test.ts', // 12
  'model-fallback.test.ts', // 12
  'agent-plugin.test.ts', // 12
  'cli-speed.test.ts', // 11
  'bench-limits.test.ts', // 11
  'gateway-openai.test.ts', // 10
  'structured-output.test.ts', // 10
  'turn-limits.test.ts', // 10
  'continue-as-new.test.ts', // 9
  'ui-browser.test.ts', // 9
  'gateway-sessions.test.ts', // 9
  'agents.test.ts', // 9
  'client-control.test.ts', // 9
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
