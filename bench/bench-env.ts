import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { connectClientConnection } from '../connection/connect-client';
import { loadConnectionConfig } from '../connection/connection-config';
import { DEFAULT_DYNAMIC_CONFIG, findFreePort, startDevServer, type DevServer, type DevServerOptions } from '../harness/dev-server';
import type { ScriptedLlm } from '../testing/scripted-llm/server';
import type { Bundle, Bundles } from './bundles';
import { spawnBenchWorker, type BenchWorker } from './worker-handle';
import type { WorkerTuning } from './worker-protocol';

export const RESULTS_DIR = path.join(import.meta.dirname, 'results');

/** The tools' workspace; the benchmark only calls the calculator, but the tool runner insists on one. */
export const BENCH_WORKSPACE = path.join(tmpdir(), 'agent-bench-workspace');

/** One private dev server and everything the measurements share on it. */
export interface BenchEnv {
  server: DevServer;
  client: Client;
  llm: ScriptedLlm;
  bundles: Bundles;
  eager: boolean;
  /** A fresh worker process on a fresh task queue; `bundle` runs other workflow code of that kind (`--compare`). */
  startWorker(kind: 'agent' | 'floor', tuning?: WorkerTuning, bundle?: Bundle, options?: { metricsPort?: number }): Promise<BenchWorker>;
  close(): Promise<void>;
}

/**
 * Starts a headless, in-memory dev server on a free port, never a developer's 7233.
 * `eager: false` starts it with eager activity execution off (the project's servers
 * have it on; see DEFAULT_DYNAMIC_CONFIG), to measure what it buys.
 */
export async function openBenchEnv(options: {
  llm: ScriptedLlm;
  /** A promise is fine: the server starts while webpack bundles. */
  bundles: Bundles | Promise<Bundles>;
  eager: boolean;
  dynamicConfig?: Record<string, unknown>;
  server?: Pick<DevServerOptions, 'dbFile' | 'extraArgs'>;
  /** Worker processes write V8 CPU profiles here (`--cpu-prof`). */
  cpuProfDir?: string;
}): Promise<BenchEnv> {
  await mkdir(RESULTS_DIR, { recursive: true });
  const port = await findFreePort();
  const server = await startDevServer({
    ip: '127.0.0.1',
    port,
    uiPort: false,
    ...options.server,
    dynamicConfig: { ...DEFAULT_DYNAMIC_CONFIG, ...options.dynamicConfig, 'system.enableActivityEagerExecution': options.eager },
    output: { file: path.join(RESULTS_DIR, 'temporal-dev-server.log') },
  });
  const bundles = await Promise.resolve(options.bundles).catch(async (error: unknown) => {
    await server.stop();
    throw error;
  });
  // The same connection code as the worker and the CLI, pointed at the private server.
  const temporal = loadConnectionConfig({ TEMPORAL_ADDRESS: server.address, TEMPORAL_NAMESPACE: server.namespace });
  const connection = await connectClientConnection(temporal);
  const client = new Client({ connection, namespace: temporal.namespace });
  const workers = new Set<BenchWorker>();
  return {
    server,
    client,
    llm: options.llm,
    bundles,
    eager: options.eager,
    async startWorker(kind, tuning = {}, bundle = bundles[kind], { metricsPort } = {}) {
      const worker = await spawnBenchWorker(
        {
          kind,
          address: server.address,
          namespace: server.namespace,
          taskQueue: `bench-${kind}-${randomUUID()}`,
          bundlePath: bundle.codePath,
          llmUrl: options.llm.url,
          workspaceDir: BENCH_WORKSPACE,
          tuning,
          ...(metricsPort === undefined ? {} : { metricsPort }),
        },
        path.join(RESULTS_DIR, 'worker.log'),
        options.cpuProfDir,
      );
      workers.add(worker);
      const stop = worker.stop.bind(worker);
      return {
        ...worker,
        stop: async () => {
          await stop();
          workers.delete(worker);
        },
      };
    },
    async close() {
      await Promise.all([...workers].map((w) => w.stop()));
      await connection.close();
      await server.stop();
    },
  };
}
