/** `npm start` (scripts/start.ts) spawns the worker with it; the tests and the soak rig reuse it. */
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { PROJECT_ROOT } from './temporal-binaries';

const LAUNCH = path.join(PROJECT_ROOT, 'bin', 'launch.js');

export interface WorkerProcess {
  readonly pid: number;
  /** Resolves once the worker polls its task queue (after bundling the workflows). */
  readonly ready: Promise<void>;
  readonly exited: Promise<number | null>;
  /** Everything the worker printed so far. */
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * `npm run worker` as a child process: what `npm start` runs, and what the crash tests
 * kill with SIGKILL. Its output goes to `logFile`.
 */
export async function spawnWorker(options: { env: NodeJS.ProcessEnv; logFile: string; readyTimeoutMs?: number; args?: readonly string[]; entry?: string }): Promise<WorkerProcess> {
  await mkdir(path.dirname(options.logFile), { recursive: true });
  const log = createWriteStream(options.logFile, { flags: 'a' });
  // As bin/worker.js starts it: compiled from dist/ while the build is fresh, so the worker
  // loads in a fraction of the time, and from the sources with tsx in the main thread only
  // otherwise (the SDK's workflow threads run without it; bin/launch.js says why).
  // `entry`: a worker main of a test's own (a `.ts` file: one that serves custom tools), started the same way.
  const child = spawn(process.execPath, [LAUNCH, options.entry ?? 'worker/main', ...(options.args ?? [])], {
    cwd: PROJECT_ROOT,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error('could not start the worker process');
  let text = '';
  const onData = (chunk: Buffer) => {
    text += chunk.toString();
    log.write(chunk);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      log.end();
      resolve(code);
    }),
  );
  const killOnExit = () => child.kill('SIGKILL');
  process.on('exit', killOnExit);
  void exited.then(() => process.off('exit', killOnExit));

  const timeoutMs = options.readyTimeoutMs ?? 120_000;
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the worker did not start within ${timeoutMs} ms; see ${options.logFile}`)), timeoutMs);
    const check = () => {
      if (text.includes('worker: polling')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the worker exited with code ${code} before it was ready:\n${text.trim().split('\n').slice(-5).join('\n')}`));
    });
  });
  ready.catch(() => undefined);
  return {
    pid: child.pid,
    ready,
    exited,
    output: () => text,
    async kill(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      await exited;
    },
  };
}
