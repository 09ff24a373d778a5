import { fork } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import path from 'node:path';
import { WorkerMessageSchema, type WorkerChildConfig, type WorkerMessage, type WorkerStats } from './worker-protocol';

const CHILD = path.join(import.meta.dirname, 'worker-child.ts');
const LAUNCH = path.join(import.meta.dirname, '..', 'bin', 'launch.js');

/** Start-up includes tsx compiling the worker's sources and connecting; a busy 2-core machine needs seconds. */
const READY_TIMEOUT_MS = 60_000;
const REQUEST_TIMEOUT_MS = 30_000;
/** Shutdown waits for in-flight tasks; nothing the benchmark leaves running takes longer. */
const STOP_TIMEOUT_MS = 30_000;

export interface BenchWorker {
  readonly pid: number;
  readonly kind: WorkerChildConfig['kind'];
  readonly taskQueue: string;
  stats(): Promise<WorkerStats>;
  /** Collects garbage in the worker, then reports its stats: for memory measurements. */
  statsAfterGc(): Promise<WorkerStats>;
  /** Floor step start times by workflow id since the last call. */
  probes(): Promise<Record<string, number[]>>;
  /** Shuts the worker down and waits for its process to exit; SIGKILL if it does not. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts a worker process and resolves once it polls its task queue. Its output goes to
 * `logFile`; with `cpuProfDir`, V8 writes its CPU profiles there when it exits.
 */
export async function spawnBenchWorker(config: WorkerChildConfig, logFile: string, cpuProfDir?: string): Promise<BenchWorker> {
  const log = openSync(logFile, 'a');
  // tsx in the main thread only, as a production worker runs (bin/launch.js).
  const child = fork(LAUNCH, [CHILD, JSON.stringify(config)], {
    execArgv: ['--expose-gc', ...(cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : [])],
    stdio: ['ignore', log, log, 'ipc'],
  });
  closeSync(log);
  const pid = child.pid;
  if (pid === undefined) throw new Error('could not start the benchmark worker process');
  const killOnExit = () => child.kill('SIGKILL');
  process.on('exit', killOnExit);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      process.off('exit', killOnExit);
      resolve(code);
    }),
  );

  const pending = new Map<number, { resolve: (m: WorkerMessage) => void; reject: (e: Error) => void }>();
  let fatal: string | undefined;
  let onReady: (() => void) | undefined;
  child.on('message', (raw) => {
    const parsed = WorkerMessageSchema.safeParse(raw);
    if (!parsed.success) {
      fatal = `unreadable message from the worker process: ${parsed.error.message}`;
      return;
    }
    const message = parsed.data;
    if (message.type === 'ready') onReady?.();
    else if (message.type === 'fatal') fatal = message.message;
    else pending.get(message.id)?.resolve(message);
  });
  void exited.then((code) => {
    const error = new Error(`the ${config.kind} worker process exited (code ${code})${fatal ? `: ${fatal}` : ''}; see ${logFile}`);
    for (const { reject } of pending.values()) reject(error);
    pending.clear();
  });

  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the ${config.kind} worker did not start within ${READY_TIMEOUT_MS} ms; see ${logFile}`)), READY_TIMEOUT_MS);
    onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the ${config.kind} worker exited with code ${code} before it was ready${fatal ? `: ${fatal}` : ''}; see ${logFile}`));
    });
  }).catch(async (error: unknown) => {
    child.kill('SIGKILL');
    await exited;
    throw error;
  });

  let nextId = 1;
  const request = (type: 'stats' | 'gc' | 'probes' | 'stop', timeoutMs = REQUEST_TIMEOUT_MS): Promise<WorkerMessage> => {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`the ${config.kind} worker did not answer "${type}" within ${timeoutMs} ms`));
      }, timeoutMs);
      pending.set(id, {
        resolve: (m) => {
          clearTimeout(timer);
          pending.delete(id);
          resolve(m);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      child.send({ id, type });
    });
  };
  const statsOf = (m: WorkerMessage): WorkerStats => {
    if (m.type !== 'stats') throw new Error(`expected stats from the worker, got ${m.type}`);
    return m.stats;
  };

  let stopping: Promise<void> | undefined;
  return {
    pid,
    kind: config.kind,
    taskQueue: config.taskQueue,
    stats: async () => statsOf(await request('stats')),
    statsAfterGc: async () => statsOf(await request('gc')),
    probes: async () => {
      const m = await request('probes');
      if (m.type !== 'probes') throw new Error(`expected probes from the worker, got ${m.type}`);
      return m.probes;
    },
    stop() {
      stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        await request('stop', STOP_TIMEOUT_MS).catch(() => child.kill('SIGKILL'));
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
}
