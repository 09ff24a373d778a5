/**
 * Small helpers so every test reaches Temporal the same way: the shared dev server
 * started by test/global-setup.ts, or a private time-skipping test server from the
 * project's own binary (never a download).
 */
import { randomUUID } from 'node:crypto';
import { TestWorkflowEnvironment, type TimeSkippingTestWorkflowEnvironmentOptions } from '@temporalio/testing';
import { inject } from 'vitest';

/** `host:port` of the dev server shared by the whole test run. */
export function devServerAddress(): string {
  const address = inject('temporalAddress') ?? process.env.TEMPORAL_TEST_ADDRESS;
  if (!address) throw new Error('no Temporal dev server: run the tests with vitest (test/global-setup.ts starts one)');
  return address;
}

/** Namespace on the shared dev server. */
export function devServerNamespace(): string {
  return inject('temporalNamespace') ?? 'default';
}

/** Path of the time-skipping test server binary installed by the project. */
export function testServerPath(): string {
  const binary = inject('temporalTestServerPath') ?? process.env.TEMPORAL_TEST_SERVER_PATH;
  if (!binary) throw new Error('no temporal-test-server path: run the tests with vitest (test/global-setup.ts installs it)');
  return binary;
}

/**
 * A private time-skipping server (Java test server, native image) for tests that sleep
 * through hours of backoff in milliseconds. One per test file, in `beforeAll`; call
 * `teardown()` in `afterAll`. The SDK gives it a fixed few seconds to come up, which the
 * native image meets, except once in a while on a 2-core machine under a load near 6:
 * then a second start is tried before the file fails.
 */
export async function createTimeSkippingEnv(
  options: Omit<TimeSkippingTestWorkflowEnvironmentOptions, 'server'> & {
    server?: Omit<NonNullable<TimeSkippingTestWorkflowEnvironmentOptions['server']>, 'executable'>;
  } = {},
): Promise<TestWorkflowEnvironment> {
  const start = () =>
    TestWorkflowEnvironment.createTimeSkipping({
      ...options,
      server: { ...options.server, executable: { type: 'existing-path', path: testServerPath() } },
    });
  return start().catch(start);
}

/**
 * A TestWorkflowEnvironment on the pinned dev server the global setup started (from
 * `.temporal/` by `existing-path`): real timers, real visibility, the agent search
 * attributes. The one server serves every test file, rather than one `createLocal` server
 * per file, which would add a server start to each file on a two-core machine.
 * `teardown()` closes this file's connections and leaves the server running.
 */
export async function createDevServerEnv(): Promise<TestWorkflowEnvironment> {
  return TestWorkflowEnvironment.createFromExistingServer({
    address: devServerAddress(),
    namespace: devServerNamespace(),
  });
}

/** A task queue no other test (or earlier run on a reused server) polls. */
export function uniqueTaskQueue(name: string): string {
  return `${name}-${randomUUID()}`;
}
