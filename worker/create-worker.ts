import { Worker, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import type { Dispatcher } from 'undici';
import type { AgentActivities } from '../activities';
import { SessionLogCache } from '../activities/llm/session-log-cache';
import type { WorkerEnv } from './config';
import type { WorkerFiles } from './config-files';
import type { Tracing } from '../tracing/tracing-provider';
import type { EncryptionKey } from '../encryption/encryption-key';
import type { AgentDefinition } from '../contracts/agents/agent-definition';
import type { CustomTool } from '../contracts/tools/custom-tool';
import type { LiveStreamPublisher } from '../contracts/live-stream';
import { AgentPlugin, type AgentPluginOptions } from './agent-plugin';

export { WORKFLOWS_PATH } from './workflows-path';

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
   * Payload encryption (encryption/): AGENT_ENCRYPTION_KEY's key, for the plugin's data
   * converter. Absent: payloads are plain JSON. With a prebuilt `workflowBundle`, bundle it
   * with `failureConverterPath: FAILURE_CONVERTER_PATH`.
   */
  encryption?: EncryptionKey;
  /** A data converter of one's own, under the plugin's (which replaces its codecs when `encryption` is given). */
  dataConverter?: WorkerOptions['dataConverter'];
  /** The worker's copy of its sessions' logs; by default one of `AGENT_LOG_CACHE_MB`. Given by tests that read its stats. */
  logCache?: SessionLogCache;
  /** OpenTelemetry tracing (tracing/tracing-provider.ts), when an OTLP endpoint is configured; absent, the worker adds no interceptor. */
  tracing?: Tracing;
  /** The agents (`defineAgent`) sessions may be started as by name (docs/agents.md). */
  agents?: readonly AgentDefinition[];
  /** The tools of one's own (`defineTool`) sessions may be offered by name (docs/tools.md#your-own-tools). */
  tools?: readonly CustomTool[];
  /** Where the sessions' live text, log and status go (docs/live-stream.md); the caller closes it. Absent: nowhere. */
  liveStream?: LiveStreamPublisher;
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

/**
 * The turnkey worker (`npm run worker`, `npm start`, the tests' workers): a worker of the
 * session workflow alone, with the plugin a program of one's own uses, its options filled
 * from the environment. What is left here is the process's: the task queue, the shutdown
 * grace and Worker Versioning.
 */
export async function createAgentWorker(options: AgentWorkerOptions): Promise<Worker> {
  const { env } = options;
  const plugin = new AgentPlugin(pluginOptionsOf(options), {
    ...(options.logCache ? { logCache: options.logCache } : {}),
    ...(options.heartbeatIntervalMs === undefined ? {} : { heartbeatIntervalMs: options.heartbeatIntervalMs }),
    ...(options.activityOverrides ? { activityOverrides: options.activityOverrides } : {}),
  });
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: env.AGENT_TASK_QUEUE,
    plugins: [plugin],
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : {}),
    // A deploy stops workers gracefully: running tool calls and streams get most of the
    // grace to finish before they are cancelled, instead of becoming TOOL_OUTCOME_UNKNOWN
    // at once; the rest is for the cancellations to reach them and be reported.
    shutdownGraceTime: activityGraceMs(env.AGENT_SHUTDOWN_GRACE_MS),
    ...versioningOptions(env),
    ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}),
    ...options.overrides,
  });
}

/** The environment and the files it names, as the plugin's options. */
function pluginOptionsOf(options: AgentWorkerOptions): AgentPluginOptions {
  const { env } = options;
  return {
    providers: {
      anthropic: { baseUrl: env.ANTHROPIC_BASE_URL, ...(env.ANTHROPIC_API_KEY ? { apiKey: env.ANTHROPIC_API_KEY } : {}) },
      openai: { baseUrl: env.OPENAI_BASE_URL, ...(env.OPENAI_API_KEY ? { apiKey: env.OPENAI_API_KEY } : {}) },
      google: { baseUrl: env.GEMINI_BASE_URL, ...(env.GEMINI_API_KEY ? { apiKey: env.GEMINI_API_KEY } : {}) },
    },
    prices: Object.fromEntries(options.prices),
    ...(options.limits?.length ? { limits: [...options.limits] } : {}),
    mcp: options.mcp,
    httpAllowlist: env.AGENT_HTTP_ALLOWLIST,
    workspace: env.AGENT_WORKSPACE,
    httpMaxResponseBytes: env.AGENT_HTTP_MAX_RESPONSE_BYTES,
    llmIdleTimeoutMs: env.AGENT_LLM_IDLE_TIMEOUT_MS,
    logCacheMb: env.AGENT_LOG_CACHE_MB,
    dispatcher: options.dispatcher,
    ...(options.encryption ? { encryption: options.encryption } : {}),
    ...(options.tracing ? { tracing: options.tracing } : {}),
    ...(options.tools ? { tools: [...options.tools] } : {}),
    ...(options.agents ? { agents: [...options.agents] } : {}),
    ...(options.liveStream ? { liveStream: options.liveStream } : {}),
  };
}
