/**
 * The benchmark's worker process: the real agent worker (`createAgentWorker`) or the
 * floor's, on a task queue of the benchmark's choosing, answering stats requests over
 * IPC. Started by bench/worker-handle.ts; never run by hand.
 */
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { Agent } from 'undici';
import { connectWorkerConnection } from '../connection/connect-worker';
import { loadConnectionConfig } from '../connection/connection-config';
import { parseWorkerEnv } from '../worker/config';
import { readWorkerFiles } from '../worker/config-files';
import { createAgentWorker } from '../worker/create-worker';
import { createToolRunner } from '../activities/tools';
import { createFloorActivities, type StepProbes } from './floor/activities';
import { createIoFloorActivities } from './floor/io-activities';
import { WorkerChildConfigSchema, WorkerRequestSchema, type WorkerChildConfig, type WorkerMessage, type WorkerStats } from './worker-protocol';

const send = (message: WorkerMessage) => process.send?.(message);

async function createWorker(config: WorkerChildConfig, connection: NativeConnection, dispatcher: Agent, probes: StepProbes): Promise<Worker> {
  const workflowBundle = { codePath: config.bundlePath };
  if (config.kind === 'floor') {
    // Both floors: the no-op one, and the one doing the agent's I/O (its LLM and its tools).
    const io = config.llmUrl === undefined ? {} : createIoFloorActivities({ dispatcher, baseUrl: config.llmUrl, runTool: createToolRunner({ dispatcher, workspaceDir: config.workspaceDir }) });
    return Worker.create({
      connection,
      namespace: config.namespace,
      taskQueue: config.taskQueue,
      workflowBundle,
      activities: { ...createFloorActivities(probes), ...io },
      ...config.tuning,
    });
  }
  if (!config.llmUrl) throw new Error('an agent worker needs llmUrl');
  const env = parseWorkerEnv({
    AGENT_TASK_QUEUE: config.taskQueue,
    ANTHROPIC_BASE_URL: config.llmUrl,
    ANTHROPIC_API_KEY: 'bench-key',
    AGENT_WORKSPACE: config.workspaceDir,
  });
  return createAgentWorker({ connection, namespace: config.namespace, env, dispatcher, ...readWorkerFiles(env, process.env), workflowBundle, overrides: config.tuning });
}

async function main(): Promise<void> {
  if (!process.send) throw new Error('bench/worker-child.ts runs only as a child of the benchmark (it needs an IPC channel)');
  const config = WorkerChildConfigSchema.parse(JSON.parse(process.argv[2] ?? '{}'));
  // The benchmark reads numbers, not worker chatter; warnings still reach the log file.
  Runtime.install({
    logger: new DefaultLogger('WARN'),
    ...(config.metricsPort === undefined ? {} : { telemetryOptions: { metrics: { prometheus: { bindAddress: `127.0.0.1:${config.metricsPort}` } } } }),
  });
  const connection = await connectWorkerConnection(loadConnectionConfig({ TEMPORAL_ADDRESS: config.address, TEMPORAL_NAMESPACE: config.namespace }));
  const dispatcher = new Agent();
  const probes: StepProbes = new Map();
  const worker = await createWorker(config, connection, dispatcher, probes);
  const running = worker.run();

  const stats = (): WorkerStats => {
    const cpu = process.cpuUsage();
    const memory = process.memoryUsage();
    return {
      cpuUserMicros: cpu.user,
      cpuSystemMicros: cpu.system,
      rssBytes: memory.rss,
      heapUsedBytes: memory.heapUsed,
      cachedWorkflows: worker.getStatus().numCachedWorkflows,
    };
  };

  let stopped: Promise<void> | undefined;
  process.on('message', (raw) => {
    const parsed = WorkerRequestSchema.safeParse(raw);
    if (!parsed.success) {
      send({ type: 'fatal', message: `bad request from the benchmark: ${parsed.error.message}` });
      return;
    }
    const { id, type } = parsed.data;
    switch (type) {
      case 'stats':
        send({ type: 'stats', id, stats: stats() });
        return;
      case 'gc':
        // Twice: the first pass queues finalizers whose objects the second one frees.
        globalThis.gc?.();
        globalThis.gc?.();
        send({ type: 'stats', id, stats: stats() });
        return;
      case 'probes':
        send({ type: 'probes', id, probes: Object.fromEntries(probes) });
        probes.clear();
        return;
      case 'stop':
        stopped ??= (async () => {
          worker.shutdown();
          await running;
          await connection.close();
          await dispatcher.close();
        })();
        void stopped.then(() => {
          send({ type: 'stopped', id });
          process.disconnect();
        });
        return;
    }
  });
  // The benchmark died without stopping us: leave instead of polling forever.
  process.on('disconnect', () => {
    if (!stopped) process.exit(1);
  });
  send({ type: 'ready' });
  await running;
}

main().catch((error: unknown) => {
  send({ type: 'fatal', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  console.error(error);
  process.exit(1);
});
