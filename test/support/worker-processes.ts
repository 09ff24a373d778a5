import { rm } from 'node:fs/promises';
import path from 'node:path';
import { PROJECT_ROOT } from '../../harness/temporal-binaries';
import { spawnWorker, type WorkerProcess } from '../../harness/worker-process';
import { workflowBundleFile } from '../../harness/local-agent';

/** Where a test's worker processes write their output: kept after the run for post-mortems. */
export function workerLogFile(name: string): string {
  return path.join(PROJECT_ROOT, 'test-results', 'workers', `${name}.log`);
}

/**
 * `npm run worker` as a child process, polling once this resolves. Its log starts empty, so
 * a test that reads it (the secrets test) sees this run only. A worker that never becomes
 * ready is killed, not left behind. `entry`: a worker main of the test's own (spawnWorker).
 */
export async function startWorkerProcess(name: string, env: NodeJS.ProcessEnv, options: { entry?: string } = {}): Promise<WorkerProcess> {
  const logFile = workerLogFile(name);
  await rm(logFile, { force: true });
  const worker = await spawnWorker({ env: await withCachedBundle(env, options), logFile, ...options });
  try {
    await worker.ready;
  } catch (error) {
    await worker.kill('SIGKILL');
    throw error;
  }
  return worker;
}

/**
 * The tests' cached workflow bundle as AGENT_WORKFLOW_BUNDLE, which spares each worker
 * process seconds of webpack. Not where the worker must make its own: with encryption or
 * tracing its bundle holds their modules, which the cached one lacks; a worker main of the
 * test's own reads what it reads; and a test that sets AGENT_WORKFLOW_BUNDLE (even blank,
 * to have the worker bundle) keeps its choice.
 */
export async function withCachedBundle(env: NodeJS.ProcessEnv, options: { entry?: string }): Promise<NodeJS.ProcessEnv> {
  const bundles = options.entry === undefined && !('AGENT_WORKFLOW_BUNDLE' in env) && !env.AGENT_ENCRYPTION_KEY && !env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const file = bundles ? await workflowBundleFile() : undefined;
  return file === undefined ? env : { ...env, AGENT_WORKFLOW_BUNDLE: file };
}
