/**
 * The CI cut of `npm run soak`: about twenty sessions through the whole failure mix, with the
 * worker restarted in the middle, on the shared dev server. Whatever the mix does to the
 * turns, nothing may be lost: every message answered, every turn and step closed, every
 * tool call paired, no side effect twice.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { CI_PROFILE, formatReport, runSoak } from '../scripts/soak';
import { SCENARIOS } from '../scripts/soak/scenarios';
import { devServerAddress, devServerNamespace } from './temporal-env';

// Failed attempts are what this file causes on purpose, hundreds of them: keep the worker's
// WARN line for each out of the report. Errors still show. (Before the harness installs its own.)
Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, console: {} } } });

describe('soak (CI profile)', () => {
  it('runs sessions through 429s, 529s, cut and stalled streams, tool timeouts and worker restarts without losing anything', async () => {
    const report = await runSoak({ ...CI_PROFILE, address: devServerAddress(), namespace: devServerNamespace() });
    const summary = formatReport(report);
    expect(report.lostData, summary).toEqual([]);
    expect(report.stuck, summary).toBe(0);
    // The run did what it claims: the worker was restarted under load and the mix was met.
    // (How many restarts fit depends on the machine's speed; at least one always does.)
    expect(report.workerRestarts, summary).toBeGreaterThanOrEqual(1);
    expect(report.sessions, summary).toBeGreaterThanOrEqual(8);
    expect(Object.keys(report.llmAttempts), summary).toEqual(expect.arrayContaining(['status', 'text']));
    expect(Object.keys(report.llmAttempts).length, summary).toBeGreaterThanOrEqual(4);
    expect(report.turnsByStatus.completed ?? 0, summary).toBeGreaterThan(0);
    expect(report.turnsByStatus.failed ?? 0, summary).toBeGreaterThan(0);
    // Every scenario of the mix ran at least once.
    expect(report.sessions, summary).toBeGreaterThanOrEqual(SCENARIOS.length);
    for (const { name } of SCENARIOS) expect(report.scenarios[name]?.turns ?? 0, `${name} never ran\n${summary}`).toBeGreaterThanOrEqual(1);
  }, 120_000);
});
