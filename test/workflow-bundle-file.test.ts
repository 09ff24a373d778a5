/**
 * AGENT_WORKFLOW_BUNDLE, a workflow bundle made at build time. That a worker started with it
 * runs sessions is shown by every worker process of the suite (test/support/worker-processes.ts
 * gives them the cached bundle; crash.test.ts checks the worker said so); here: what it
 * refuses, and which of the suite's workers get it.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { workflowBundleFile } from '../harness/local-agent';
import { parseWorkerEnv } from '../worker/config';
import { AgentPlugin } from '../worker/agent-plugin';
import { WORKFLOWS_PATH } from '../worker/create-worker';
import { prebuiltWorkflowBundle } from '../worker/workflow-bundle-file';
import { runEntry } from './support/cli';
import { useTempDir } from './support/temp-dir';
import { withCachedBundle } from './support/worker-processes';

const dir = useTempDir('workflow-bundle-file-');
const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} };

async function cachedBundle(): Promise<string> {
  const file = await workflowBundleFile();
  if (file === undefined) throw new Error('the workflow sources changed while they were bundled');
  return file;
}

describe('AGENT_WORKFLOW_BUNDLE', () => {
  it('refuses a path that is no readable file, naming the setting in one line', async () => {
    const folder = path.join(dir(), 'a-folder');
    await mkdir(folder);
    for (const file of [path.join(dir(), 'missing.js'), folder]) {
      expect(() => parseWorkerEnv({ AGENT_WORKFLOW_BUNDLE: file })).toThrow(/^AGENT_WORKFLOW_BUNDLE: no readable file at that path \(a bundle made by bundleWorkflowCode\)$/);
    }
    const bundle = await cachedBundle();
    expect(parseWorkerEnv({ AGENT_WORKFLOW_BUNDLE: bundle }).AGENT_WORKFLOW_BUNDLE).toBe(bundle);
  });

  it('stops npm run worker, before it connects, when the bundle lacks what encryption writes failures with, and never prints the key', async () => {
    const key = randomBytes(32).toString('base64');
    const result = await runEntry('worker/main.ts', [], { AGENT_WORKFLOW_BUNDLE: await cachedBundle(), AGENT_ENCRYPTION_KEY: key, AGENT_ENCRYPTION_KEY_ID: 'k1', TEMPORAL_ADDRESS: 'localhost:1' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      'worker: AGENT_WORKFLOW_BUNDLE: the bundle lacks the failure converter AGENT_ENCRYPTION_KEY needs; make it with bundleWorkflowCode({ plugins: [agentPlugin], workflowsPath }) and the same settings (docs/configuration.md)',
    ]);
    expect(result.stderr + result.stdout).not.toContain(key);
  });

  it('refuses a bundle without the workflow interceptors for a worker that traces, and both missing parts together', async () => {
    const bundle = await cachedBundle();
    expect(() => prebuiltWorkflowBundle(bundle, new Set(['tracing']))).toThrow(/^AGENT_WORKFLOW_BUNDLE: the bundle lacks the workflow interceptors OTEL_EXPORTER_OTLP_ENDPOINT needs;/);
    expect(() => prebuiltWorkflowBundle(bundle, new Set(['encryption', 'tracing']))).toThrow(/^AGENT_WORKFLOW_BUNDLE: the bundle lacks the failure converter AGENT_ENCRYPTION_KEY needs and the workflow interceptors OTEL_EXPORTER_OTLP_ENDPOINT needs;/);
    expect(prebuiltWorkflowBundle(bundle, new Set())).toEqual({ codePath: bundle });
  });

  it("is given to the suite's worker processes, except to those that must bundle their own: encrypting, tracing, a main of the test's own, or a test's own choice", async () => {
    const bundle = await cachedBundle();
    const base = { AGENT_TASK_QUEUE: 'q' };
    expect(await withCachedBundle(base, {})).toEqual({ ...base, AGENT_WORKFLOW_BUNDLE: bundle });
    for (const [env, options] of [
      [{ ...base, AGENT_ENCRYPTION_KEY: 'k' }, {}],
      [{ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }, {}],
      [{ ...base, AGENT_WORKFLOW_BUNDLE: '' }, {}],
      [base, { entry: 'test/support/agents-worker.ts' }],
    ] as const) {
      expect(await withCachedBundle(env, options)).toEqual(env);
    }
  });

  it('takes a bundle made with the plugin of an encrypting worker, as docs/configuration.md says to make it', async () => {
    const plugin = new AgentPlugin({ encryption: { id: 'k1', bytes: randomBytes(32) } });
    const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, plugins: [plugin], logger: quiet });
    const file = path.join(dir(), 'encrypting.js');
    await writeFile(file, code);
    expect(prebuiltWorkflowBundle(file, new Set(['encryption']))).toEqual({ codePath: file });
  }, 60_000);
});
