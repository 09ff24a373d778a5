import { defineConfig } from 'vitest/config';
import SlowFirstSequencer from './test/support/slow-first-sequencer';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Worker threads share one process with the Temporal native bridge (Rust core), which
    // crashes when several threads load and tear it down; separate processes do not.
    pool: 'forks',
    // Two cores on every machine (CI included): a third fork only fights the servers for CPU.
    maxWorkers: 2,
    // A real server: a workflow test spins up a worker, bundles workflow code (seconds
    // on a cold cache) and waits for history, so the 5 s default fails on a busy machine.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    // The slowest files first, so neither fork sits idle while one runs a long file last.
    sequence: { sequencer: SlowFirstSequencer },
    // Transformed modules kept on disk (node_modules/.experimental-vitest-cache), keyed by
    // each file's path and content: a mutation trial re-transforms only the file it broke
    // (seconds of a core per trial, a hundred trials), and a second local run starts warm.
    experimental: { fsModuleCache: true },
    // One dev server for the whole run (see test/global-setup.ts).
    globalSetup: ['test/global-setup.ts'],
    // .ci/run computes its closing "N passed, N failed" line from the JSON report.
    reporters: ['default', ['json', { outputFile: 'test-results/vitest.json' }]],
  },
});
