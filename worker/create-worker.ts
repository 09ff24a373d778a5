import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import type { Dispatcher } from 'undici';
import { createActivities, type AgentActivities } from '../activities';
import { SessionLogCache, sessionLogSinks } from '../activities/llm/session-log-cache';
import { McpConnections } from '../activities/mcp';
import type { WorkerEnv } from './config';
import type { WorkerFiles } from './config-files';
import { stopMcpServersWithWorker } from './mcp-lifetime';
import type { Tracing } from '../tracing/tracing-provider';
import { workerTracingOptions } from '../tracing/tracing-worker';

/** `.ts` beside the sources, `.js` in the build (dist/): the workflows are bundled from whichever this file is. */
export const WORKFLOWS_PATH = fileURLToPath(new URL(`../workflows/index${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url));

/**
 * `mcp` and `prices` are what the process's main read from the files `env` names
 * (`readWorkerFiles`): the worker reads no file of its own, so each is read once per
 * process, also when a process starts its worker again.
 */
export interface AgentWorkerOptions extends WorkerFiles {
  connection: NativeConnection;
  namespace: string;
  env: WorkerEnv;
  dispatcher: Dispatcher;
  /** A prebuilt bundle (tests build one per file); otherwise `workflows/` is bundled at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Overrides for tests and benchmarks. */
  overrides?: Partial<WorkerOptions>;
  /** Stubs merged over the real activities, for tests that must control one of them. */
  activityOverrides?: Partial<AgentActivities>;
  heartbeatIntervalMs?: number;
  /**
   * Payload encryption (encryption/): `workerDataConverter(key)`. Absent: payloads
   * are plain JSON. With a prebuilt `workflowBundle`, bundle it with the same `failureConverterPath`.
   */
  dataConverter?: WorkerOptions['dataConverter'];
  /** The worker's copy of its sessions' logs; by default one of `AGENT_LOG_CACHE_MB`. Given by tests that read its stats. */
  logCache?: SessionLogCache;
  /** OpenTelemetry tracing (tracing/tracing-provider.ts), when an OTLP endpoint is configured; absent, the worker adds no interceptor. */
  tracing?: Tracing;
}

/** The worker's copy of its sessions' logs, sized by `AGENT_LOG_CACHE_MB`. */
export function logCacheFor(env: Pick<WorkerEnv, 'AGENT_LOG_CACHE_MB'>): SessionLogCache {
  return new SessionLogCache(env.AGENT_LOG_CACHE_MB * 1024 * 1024);
}

/** What running activities get of the shutdown grace before they are cancelled. */
export function activityGraceMs(graceMs: number): number {
  return Math.floor(graceMs * 0.8);
}

/**
 * Worker Versioning, when AGENT_DEPLOYMENT_NAME and AGENT_BUILD_ID are set: sessions are
 * Pinned to the version that started them, so a deploy never replays a running session on
 * new code; they move to the current version when they continue as new (workflows/session.ts).
 */
function versioningOptions(env: Pick<WorkerEnv, 'AGENT_DEPLOYMENT_NAME' | 'AGENT_BUILD_ID'>): Pick<WorkerOptions, 'workerDeploymentOptions'> {
  if (env.AGENT_DEPLOYMENT_NAME === undefined || env.AGENT_BUILD_ID === undefined) return {};
  return {
    workerDeploymentOptions: {
      version: { deploymentName: env.AGENT_DEPLOYMENT_NAME, buildId: env.AGENT_BUILD_ID },
      useWorkerVersioning: true,
      defaultVersioningBehavior: 'PINNED',
    },
  };
}

export async function createAgentWorker(options: AgentWorkerOptions): Promise<Worker> {
  const { env } = options;
  const logCache = options.logCache ?? logCacheFor(env);
  const mcp = new McpConnections(options.mcp);
  const activities = createActivities({
    dispatcher: options.dispatcher,
    llm: {
      providers: {
        anthropic: { baseUrl: env.ANTHROPIC_BASE_URL, apiKey: env.ANTHROPIC_API_KEY },
        openai: { baseUrl: env.OPENAI_BASE_URL, apiKey: env.OPENAI_API_KEY },
        google: { baseUrl: env.GEMINI_BASE_URL, apiKey: env.GEMINI_API_KEY },
      },
      streamIdleTimeoutMs: env.AGENT_LLM_IDLE_TIMEOUT_MS,
      logCache,
      prices: options.prices,
      traceContent: options.tracing?.config.content === true,
      ...(options.heartbeatIntervalMs === undefined ? {} : { heartbeatIntervalMs: options.heartbeatIntervalMs }),
    },
    tools: {
      workspaceDir: env.AGENT_WORKSPACE,
      httpAllowlist: env.AGENT_HTTP_ALLOWLIST,
      maxResponseBytes: env.AGENT_HTTP_MAX_RESPONSE_BYTES,
    },
    mcp,
    traceContent: options.tracing?.config.content === true,
  });
  const tracing = options.tracing ? await workerTracingOptions(options.tracing) : undefined;
  const worker = await Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: env.AGENT_TASK_QUEUE,
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
    activities: { ...activities, ...options.activityOverrides },
    sinks: { ...sessionLogSinks(logCache), ...tracing?.sinks },
    ...(tracing ? { interceptors: tracing.interceptors } : {}),
    // Cancellation reaches an activity only in a heartbeat's response, and the SDK would
    // otherwise hold heartbeats back for up to 80 % of the heartbeat timeout (30 s without
    // one): a cancelled turn would keep streaming, or keep a tool running, that long.
    maxHeartbeatThrottleInterval: '2 seconds',
    defaultHeartbeatThrottleInterval: '2 seconds',
    // A deploy stops workers gracefully: running tool calls and streams get most of the
    // grace to finish before they are cancelled, instead of becoming TOOL_OUTCOME_UNKNOWN
    // at once; the rest is for the cancellations to reach them and be reported.
    shutdownGraceTime: activityGraceMs(env.AGENT_SHUTDOWN_GRACE_MS),
    ...versioningOptions(env),
    ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}),
    ...options.overrides,
  });
  return stopMcpServersWithWorker(worker, mcp);
}
