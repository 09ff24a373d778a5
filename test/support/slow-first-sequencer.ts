import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest (seconds of a full `npx vitest run` on this 2-core machine on
 * 2026-12-02 between 15:02 and 15:37 UTC, while three other engineers worked: load average
 * 8 to 12, so about 3 to 4 times a quiet CI run's; the order is what counts), started first.
 * Vitest orders a clean clone's files by size, which says little about time here (a small
 * file can wait a minute on servers and retries), so a long file could start last and leave
 * one fork idle for its whole run. A file missing from the list runs after them, in vitest's
 * own order: a stale list costs time, never a test. A CI run's test-results/vitest.json gives
 * the next figures.
 */
const SLOWEST = [
  'replay-bites.test.ts', // 255
  'tracing.test.ts', // 244
  'package.test.ts', // 193
  'start.test.ts', // 184
  'bench.test.ts', // 151 (stopped at its old 150 s limit: dist/ was older than the sources, so its CLI measure built it)
  'docs-commands.test.ts', // 131
  'connection-tls.test.ts', // 123
  'mcp-crash.test.ts', // 106
  'compiled-worker.test.ts', // 98
  'encryption.test.ts', // 93
  'llm-retries.test.ts', // 90
  'many-workers.test.ts', // 77
  'docker-compose.test.ts', // 74
  'cli-speed.test.ts', // 66
  'custom-tools-process.test.ts', // 65
  'bench-compare.test.ts', // 65
  'client-watch.test.ts', // 60
  'fleet-lease.test.ts', // 60
  'bench-stream.test.ts', // 57
  'mcp-hostile.test.ts', // 55
  'namespace-check.test.ts', // 54
  'mcp-http.test.ts', // 53
  'long-session.test.ts', // 52
  'worker-shutdown.test.ts', // 49
  'secrets.test.ts', // 48
  'crash.test.ts', // 48
  'client-errors.test.ts', // 46
  'provider-fidelity-sessions.test.ts', // 45
  'fleet-limits.test.ts', // 42
  'client-log-chain.test.ts', // 42
  'ladder-departures.test.ts', // 38
  'agent-plugin.test.ts', // 37
  'compaction-crash.test.ts', // 36
  'client-run.test.ts', // 34
  'mcp-tools.test.ts', // 31
  'ladder-time-skipping.test.ts', // 30
  'gateway-events.test.ts', // 29
  'client-settings.test.ts', // 29
  'model-fallback.test.ts', // 29
  'approval-reused-call-id.test.ts', // 29
  'bad-input.test.ts', // 28
  'chat-page.test.ts', // 27
  'gateway-sessions.test.ts', // 26
  'client-session.test.ts', // 26
  'gateway-events-broker.test.ts', // 25
  'approval.test.ts', // 24
  'incident-replay.test.ts', // 23
  'run-agent-test.test.ts', // 22
  'structured-output-cli.test.ts', // 22
  'worker-versioning.test.ts', // 22
  'custom-tools.test.ts', // 21
  'soak.test.ts', // 21
  'live-stream.test.ts', // 20
  'gateway-openai.test.ts', // 19
  'compaction-recovery.test.ts', // 19
  'structured-output.test.ts', // 17
  'server-restart.test.ts', // 16
  'client-control.test.ts', // 14
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
