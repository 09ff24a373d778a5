import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowBundle } from '../harness/local-agent';
import { WORKFLOWS_PATH } from '../worker/create-worker';

const FLOOR_WORKFLOWS_PATH = path.join(import.meta.dirname, 'floor', 'workflows.ts');

export interface Bundle {
  code: string;
  /** The same code on disk, for worker processes (`workflowBundle: { codePath }`). */
  codePath: string;
}

export interface Bundles {
  agent: Bundle;
  floor: Bundle;
  /** Milliseconds spent bundling both: reported, and kept out of every measurement. */
  bundlingMs: number;
  remove(): Promise<void>;
}

const quietLogger = { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} };

/**
 * Bundles the session workflows and the floor's once, before anything is measured:
 * webpack takes seconds on two cores, and a worker or replay that bundled on its own
 * would measure webpack.
 */
export async function buildBundles(options: { cachedAgent: boolean }): Promise<Bundles> {
  const started = performance.now();
  const dir = await mkdtemp(path.join(tmpdir(), 'agent-bench-'));
  // One after the other: in parallel they only fight over two cores.
  const agentPath = path.join(dir, 'agent.js');
  const agent = options.cachedAgent ? await cachedAgentBundle(agentPath) : await bundleTo(WORKFLOWS_PATH, agentPath);
  const floor = await bundleTo(FLOOR_WORKFLOWS_PATH, path.join(dir, 'floor.js'));
  return { agent, floor, bundlingMs: performance.now() - started, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Bundles the workflows at `workflowsPath` and writes the code to `codePath`, for worker processes. */
export async function bundleTo(workflowsPath: string, codePath: string): Promise<Bundle> {
  const { code } = await bundleWorkflowCode({ workflowsPath, logger: quietLogger });
  await writeFile(codePath, code);
  return { code, codePath };
}

/**
 * The working tree's session workflows as the tests bundle them, once per content of the
 * code (harness/workflow-bundle-cache.ts), written to `codePath` for worker processes.
 */
export async function cachedAgentBundle(codePath: string): Promise<Bundle> {
  const { code } = await workflowBundle();
  await writeFile(codePath, code);
  return { code, codePath };
}
