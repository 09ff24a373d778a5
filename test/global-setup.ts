/**
 * Runs once per `vitest run`, in the main process, before any test file: installs the
 * Temporal binaries if needed and starts ONE dev server that every test file shares
 * (each test isolates itself with its own task queue and workflow ids), with
 * `TestWorkflowEnvironment.createLocal` on the pinned `temporal` binary (`existing-path`).
 * One server for the run rather than one per file: on two cores each start costs seconds.
 *
 * The server listens on a free port, never 7233, so a developer's own `npm run server`
 * keeps running beside the tests. Its history lives in memory and goes with it.
 *
 * Set TEMPORAL_TEST_ADDRESS to run the tests against a server you already have.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { TestProject } from 'vitest/node';
import { DEFAULT_DYNAMIC_CONFIG, dynamicConfigArgs, findFreePort } from '../harness/dev-server';
import { temporalCliPath, temporalTestServerPath } from '../harness/temporal-binaries';
import { AGENT_SEARCH_ATTRIBUTES } from '../contracts/search-attributes';

declare module 'vitest' {
  export interface ProvidedContext {
    /** `host:port` of the shared dev server. */
    temporalAddress: string;
    /** Namespace on it, with the agent search attributes registered. */
    temporalNamespace: string;
    /** Its Web UI, or '' when the address came from TEMPORAL_TEST_ADDRESS. */
    temporalUiUrl: string;
    /** The Temporal CLI binary (`temporal`). */
    temporalCliPath: string;
    /** The time-skipping test server binary, for `{ type: 'existing-path' }`. */
    temporalTestServerPath: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [cliPath, testServerPath] = await Promise.all([temporalCliPath(), temporalTestServerPath()]);

  let env: TestWorkflowEnvironment | undefined;
  let address = process.env.TEMPORAL_TEST_ADDRESS;
  let uiUrl = '';
  if (address === undefined || address === '') {
    // Loaded only to start a server: the SDK's testing package takes half a second of a core
    // to load, which every mutation trial (given a server's address) would pay for nothing.
    const [{ TestWorkflowEnvironment }, port, uiPort] = await Promise.all([import('@temporalio/testing'), findFreePort(), findFreePort()]);
    env = await TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path: cliPath },
        ip: '127.0.0.1',
        port,
        ui: true,
        uiPort,
        searchAttributes: [...AGENT_SEARCH_ATTRIBUTES],
        // Only errors: the server's chatter would interleave with the test report.
        log: { format: 'json', level: 'error' },
        extraArgs: dynamicConfigArgs(DEFAULT_DYNAMIC_CONFIG),
      },
    });
    address = env.address;
    uiUrl = `http://127.0.0.1:${uiPort}`;
  }

  project.provide('temporalAddress', address);
  project.provide('temporalNamespace', env?.namespace ?? 'default');
  project.provide('temporalUiUrl', uiUrl);
  project.provide('temporalCliPath', cliPath);
  project.provide('temporalTestServerPath', testServerPath);
  // Also through the environment, inherited by the test forks and by anything a test
  // spawns (`npm start -- --once`, the worker in a crash test), which cannot inject().
  process.env.TEMPORAL_TEST_ADDRESS = address;
  process.env.TEMPORAL_CLI_PATH = cliPath;
  process.env.TEMPORAL_TEST_SERVER_PATH = testServerPath;

  return async () => {
    await env?.teardown();
  };
}
