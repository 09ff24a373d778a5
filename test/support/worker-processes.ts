import { rm } from 'node:fs/promises';
import path from 'node:path';
import { PROJECT_ROOT } from '../../harness/temporal-binaries';
import { spawnWorker, type WorkerProcess } from '../../harness/worker-process';

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
  const worker = await spawnWorker({ env, logFile, ...options });
  try {
    await worker.ready;
  } catch (error) {
    await worker.kill('SIGKILL');
    throw error;
  }
  return worker;
}
