import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import path from 'node:path';
import { DefaultLogger, NativeConnection, Runtime, Worker, type WorkflowBundle } from '@temporalio/worker';
import { Agent } from 'undici';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import type { SessionLogCache } from '../activities/llm/session-log-cache';
import { parseWorkerEnv, type WorkerEnv } from '../worker/config';
import { readWorkerFiles } from '../worker/config-files';
import { createAgentWorker, logCacheFor, WORKFLOWS_PATH } from '../worker/create-worker';
import type { ToolActivities } from '../contracts/tools/tool-outcome';
import type { AgentDefinition } from '../contracts/agents/agent-definition';
import type { CustomTool } from '../contracts/tools/custom-tool';
import { PROJECT_ROOT } from './temporal-binaries';
import { cachedWorkflowBundle, cachedWorkflowBundleFile } from './workflow-bundle-cache';

const BUNDLE_CACHE = {
  root: PROJECT_ROOT,
  workflowsPath: WORKFLOWS_PATH,
  cacheDir: path.join(PROJECT_ROOT, 'node_modules', '.cache', 'durable-agent-worker', 'workflow-bundles'),
};

let bundle: Promise<WorkflowBundle> | undefined;
/**
 * Bundling takes seconds on two cores: harness/workflow-bundle-cache.ts makes the bundle once
 * per content of the workflows for every test file of a run (and the runs after it), and
 * each process reads it once.
 */
export function workflowBundle(): Promise<WorkflowBundle> {
  bundle ??= cachedWorkflowBundle(BUNDLE_CACHE);
  return bundle;
}

/** The same bundle's file, for worker processes (AGENT_WORKFLOW_BUNDLE), so each one starts without webpack. */
export function workflowBundleFile(): Promise<string | undefined> {
  return cachedWorkflowBundleFile(BUNDLE_CACHE);
}

export interface LocalAgent {
  client: Client;
  llm: ScriptedLlm;
  taskQueue: string;
  /** The worker's settings, and where it connects as a client process's environment spells it. */
  env: WorkerEnv & { TEMPORAL_ADDRESS: string; TEMPORAL_NAMESPACE: string };
  /** The running worker's copy of its sessions' logs; a restarted worker starts with an empty one, as a new process would. */
  readonly logCache: SessionLogCache;
  /** Starts the worker again (after `stopWorker`), e.g. to show a session surviving a restart. */
  startWorker(): Promise<void>;
  stopWorker(): Promise<void>;
  close(): Promise<void>;
}

export interface LocalAgentOptions {
  /** `host:port` of the Temporal server. */
  address: string;
  namespace?: string;
  /** Default: a fresh random one. */
  taskQueue?: string;
  /** Replaces the real tool activity, to control its timing and failures. */
  runTool?: ToolActivities['runTool'];
  /** Tools of one's own (`defineTool`) the worker serves. */
  tools?: readonly CustomTool[];
  env?: Record<string, string>;
  heartbeatIntervalMs?: number;
  /** The agents (defineAgent) the worker serves. */
  agents?: readonly AgentDefinition[];
}

/**
 * A real worker on a Temporal server, with the real LLM activity talking to a real
 * scripted LLM server over HTTP. Only the tool activity may be replaced.
 */
export async function startLocalAgent(options: LocalAgentOptions): Promise<LocalAgent> {
  quietRuntime();
  const llm = await startScriptedLlm();
  const taskQueue = options.taskQueue ?? `agent-${randomUUID()}`;
  const namespace = options.namespace ?? 'default';
  const workerEnv = parseWorkerEnv({
    AGENT_TASK_QUEUE: taskQueue,
    ANTHROPIC_BASE_URL: llm.url,
    OPENAI_BASE_URL: llm.url,
    GEMINI_BASE_URL: llm.url,
    ANTHROPIC_API_KEY: 'test-anthropic-key',
    OPENAI_API_KEY: 'test-openai-key',
    GEMINI_API_KEY: 'test-gemini-key',
    AGENT_WORKSPACE: '.data/local-agent-workspace',
    ...options.env,
  });
  const env = { ...workerEnv, TEMPORAL_ADDRESS: options.address, TEMPORAL_NAMESPACE: namespace };
  // Read once, as the worker process's main does: a restarted worker keeps what the first read.
  const files = readWorkerFiles(workerEnv, process.env);
  const connection = await NativeConnection.connect({ address: env.TEMPORAL_ADDRESS });
  const clientConnection = await Connection.connect({ address: env.TEMPORAL_ADDRESS });
  const client = new Client({ connection: clientConnection, namespace: env.TEMPORAL_NAMESPACE });
  const dispatcher = new Agent();

  let running: { worker: Worker; done: Promise<void> } | undefined;
  let logCache: SessionLogCache;
  const startWorker = async () => {
    logCache = logCacheFor(env);
    const worker = await createAgentWorker({
      connection,
      namespace,
      env,
      dispatcher,
      ...files,
      logCache,
      workflowBundle: await workflowBundle(),
      ...(options.heartbeatIntervalMs === undefined ? {} : { heartbeatIntervalMs: options.heartbeatIntervalMs }),
      ...(options.runTool ? { activityOverrides: { runTool: options.runTool } } : {}),
      ...(options.tools ? { tools: options.tools } : {}),
      ...(options.agents ? { agents: options.agents } : {}),
    });
    running = { worker, done: worker.run() };
  };
  const stopWorker = async () => {
    if (!running) return;
    running.worker.shutdown();
    await running.done;
    running = undefined;
  };
  await startWorker();
  return {
    client,
    llm,
    taskQueue,
    env,
    get logCache() {
      return logCache;
    },
    startWorker,
    stopWorker,
    async close() {
      await stopWorker();
      await clientConnection.close();
      await connection.close();
      await dispatcher.close();
      await llm.close();
    },
  };
}

let runtimeInstalled = false;
/** Worker state changes at INFO drown a test report; warnings and errors still show. */
function quietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Already installed by another harness in this process.
  }
}
