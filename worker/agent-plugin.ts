import { createRequire } from 'node:module';
import type { ClientOptions, ClientPlugin } from '@temporalio/client';
import { SimplePlugin } from '@temporalio/plugin';
import type { BundleOptions, BundlerPlugin, ReplayWorkerOptions, Worker, WorkerInterceptors, WorkerOptions, WorkerPlugin } from '@temporalio/worker';
import { getGlobalDispatcher } from 'undici';
import { createActivities, type AgentActivities } from '../activities';
import { SessionLogCache, sessionLogSinks } from '../activities/llm/session-log-cache';
import { createChildSessionActivities } from '../activities/child-session/ask-session';
import { McpConnections } from '../activities/mcp';
import { ConfigError } from '../config/config-error';
import { clientDataConverter, FAILURE_CONVERTER_PATH, workerDataConverter } from '../encryption/data-converter';
import { WORKFLOW_INTERCEPTORS_MODULE, workerTracingOptions } from '../tracing/tracing-worker';
import { parseAgentPluginOptions, priceTableOf, type AgentPluginOptions, type AgentPluginSettings } from './agent-plugin-options';
import { WORKFLOWS_PATH } from './workflows-path';
import { liveSessionSinks } from './live-stream-sinks';

export { type AgentPluginOptions } from './agent-plugin-options';

/** What the project's own worker and tests give the plugin beside its options; not part of the package's interface. */
export interface AgentPluginInternals {
  /** The worker's copy of its sessions' logs, given by tests that read its stats. */
  logCache?: SessionLogCache;
  heartbeatIntervalMs?: number;
  /** Stubs merged over the real activities, for tests that must control one of them. */
  activityOverrides?: Partial<AgentActivities>;
}

/**
 * Cancellation reaches an activity only in a heartbeat's response, and the SDK would
 * otherwise hold heartbeats back for up to 80 % of the heartbeat timeout (30 s without
 * one): a cancelled turn would keep streaming, or keep a tool running, that long.
 */
const HEARTBEAT_THROTTLE = '2 seconds';

/**
 * The agent on a Temporal worker and client of one's own (docs/plugin.md), built on
 * `@temporalio/plugin`. On `Worker.create` it adds the LLM, tool and MCP activities, the
 * session workflow (the worker's `workflowsPath` when it has none), the sink that mirrors
 * each session's log into the worker (and, with `liveStream`, onto the live stream), the data converter when `encryption` is given and
 * the tracing interceptors when `tracing` is; on a `Client` the converter and the client
 * interceptor; on `Worker.runReplayHistory` and `bundleWorkflowCode` what replaying and
 * bundling the session workflow need. The options are checked here, once, so a bad one
 * stops the program before anything connects.
 *
 * The merging of options (activities appended, converters and interceptors combined) is
 * Temporal's `SimplePlugin`; the plugin wraps one rather than extending it because its
 * worker hook has to await the tracing interceptors, which load only when tracing is on.
 */
export class AgentPlugin implements WorkerPlugin, ClientPlugin, BundlerPlugin {
  readonly name = 'durable-agent-worker';
  readonly #base: SimplePlugin;
  readonly #settings: AgentPluginSettings;
  readonly #activities: object;
  readonly #logCache: SessionLogCache;

  constructor(options: AgentPluginOptions = {}, internals: AgentPluginInternals = {}) {
    const settings = parseAgentPluginOptions(options);
    const logCache = internals.logCache ?? new SessionLogCache(settings.logCacheMb * 1024 * 1024);
    const mcp = new McpConnections(settings.mcp);
    const activities = { ...agentActivities(settings, logCache, mcp, internals), ...createChildSessionActivities(), ...internals.activityOverrides };
    let running = 0;
    this.#base = new SimplePlugin({
      name: this.name,
      activities,
      ...(settings.encryption ? { dataConverter: workerDataConverter(settings.encryption) } : {}),
      // Stdio MCP servers are child processes: they stop when the last worker using them
      // stops running, also in a process that goes on (a test, the local agent). A worker
      // started again opens them again at its first call.
      runContext: async (next) => {
        running++;
        try {
          await next();
        } finally {
          if (--running === 0) await mcp.close();
        }
      },
    });
    this.#settings = settings;
    this.#activities = activities;
    this.#logCache = logCache;
  }

  async configureWorker(options: WorkerOptions): Promise<WorkerOptions> {
    refuseTakenNames(options.activities, this.#activities);
    const tracing = this.#settings.tracing && (await workerTracingOptions(this.#settings.tracing));
    return this.#base.configureWorker({
      ...options,
      ...withSessionWorkflow(options),
      sinks: { ...options.sinks, ...liveSessionSinks(sessionLogSinks(this.#logCache), this.#settings.liveStream), ...tracing?.sinks },
      interceptors: tracing ? withInterceptors(options.interceptors, tracing.interceptors ?? {}, options.workflowBundle === undefined) : options.interceptors,
      maxHeartbeatThrottleInterval: options.maxHeartbeatThrottleInterval ?? HEARTBEAT_THROTTLE,
      defaultHeartbeatThrottleInterval: options.defaultHeartbeatThrottleInterval ?? HEARTBEAT_THROTTLE,
    });
  }

  runWorker(worker: Worker, next: (worker: Worker) => Promise<void>): Promise<void> {
    return this.#base.runWorker(worker, next);
  }

  /** `Worker.runReplayHistory({ plugins: [new AgentPlugin()] }, history)` replays a session with nothing else given. */
  configureReplayWorker(options: ReplayWorkerOptions): ReplayWorkerOptions {
    return this.#base.configureReplayWorker({ ...options, ...withSessionWorkflow(options) });
  }

  /**
   * A bundle made ahead (`bundleWorkflowCode({ plugins: [plugin], workflowsPath })`) gets the
   * failure converter that encryption needs and the workflow half of tracing.
   */
  configureBundler(options: BundleOptions): BundleOptions {
    const bundle = this.#base.configureBundler(options);
    return {
      ...bundle,
      ...(this.#settings.encryption ? { failureConverterPath: bundle.failureConverterPath ?? FAILURE_CONVERTER_PATH } : {}),
      ...(this.#settings.tracing ? { workflowInterceptorModules: [...(bundle.workflowInterceptorModules ?? []), WORKFLOW_INTERCEPTORS_MODULE] } : {}),
    };
  }

  /**
   * The client's converter holds its failure converter as an object, not a path: a client
   * may run where the worker's `.ts` module could not be loaded (under vitest, say).
   */
  configureClient(options: Omit<ClientOptions, 'plugins'>): Omit<ClientOptions, 'plugins'> {
    const { encryption, tracing } = this.#settings;
    return {
      ...options,
      ...(encryption ? { dataConverter: clientDataConverter(encryption) } : {}),
      ...(tracing ? { interceptors: { ...options.interceptors, workflow: [...workflowClientInterceptors(options.interceptors), clientTracingInterceptor()] } } : {}),
    };
  }
}

function agentActivities(settings: AgentPluginSettings, logCache: SessionLogCache, mcp: McpConnections, internals: AgentPluginInternals): AgentActivities {
  const { providers } = settings;
  const dispatcher = settings.dispatcher ?? getGlobalDispatcher();
  const traceContent = settings.tracing?.config.content === true;
  return createActivities({
    dispatcher,
    llm: {
      providers: { anthropic: endpoint(providers.anthropic), openai: endpoint(providers.openai), google: endpoint(providers.google) },
      streamIdleTimeoutMs: settings.llmIdleTimeoutMs,
      logCache,
      prices: priceTableOf(settings.prices),
      ...(settings.limits.length > 0 ? { limits: settings.limits } : {}),
      traceContent,
      ...(settings.liveStream ? { live: settings.liveStream } : {}),
      ...(internals.heartbeatIntervalMs === undefined ? {} : { heartbeatIntervalMs: internals.heartbeatIntervalMs }),
    },
    tools: { workspaceDir: settings.workspace, httpAllowlist: settings.httpAllowlist, maxResponseBytes: settings.httpMaxResponseBytes },
    mcp,
    traceContent,
    // An agent's tools are the worker's too: a session of that agent is offered them by name.
    customTools: [...new Set([...settings.tools, ...settings.agents.flatMap((agent) => agent.customTools)])],
    agents: settings.agents,
  });
}

function endpoint(provider: { baseUrl: string; apiKey?: string | undefined }): { baseUrl: string; apiKey: string | undefined } {
  return { baseUrl: provider.baseUrl, apiKey: provider.apiKey };
}

/**
 * A worker given neither a `workflowsPath` nor a bundle runs the session workflow alone. A
 * worker of one's own workflows names its own file, which re-exports `agentSession` from
 * `durable-agent-worker/workflows` (docs/plugin.md): one bundle holds both.
 */
function withSessionWorkflow<T extends Pick<WorkerOptions, 'workflowsPath' | 'workflowBundle'>>(options: T): Partial<T> {
  return options.workflowsPath === undefined && options.workflowBundle === undefined ? ({ workflowsPath: WORKFLOWS_PATH } as Partial<T>) : {};
}

/** A program's own activity of the same name as one of the agent's would be silently replaced: refused instead. */
function refuseTakenNames(own: object | undefined, agent: object): void {
  const taken = Object.keys(own ?? {}).filter((name) => name in agent);
  if (taken.length > 0) throw new ConfigError(`AgentPlugin: the worker's activities ${taken.map((name) => JSON.stringify(name)).join(', ')} have the names of the agent's own; rename them`);
}

/** Tracing's interceptors after the worker's own; its workflow module only where the worker bundles (a made bundle has it from configureBundler). */
function withInterceptors(own: WorkerInterceptors | undefined, tracing: WorkerInterceptors, bundling: boolean): WorkerInterceptors {
  return {
    ...own,
    activity: [...(own?.activity ?? []), ...(tracing.activity ?? [])],
    workflowModules: [...(own?.workflowModules ?? []), ...(bundling ? (tracing.workflowModules ?? []) : [])],
  };
}

function workflowClientInterceptors(interceptors: ClientOptions['interceptors']): NonNullable<Extract<NonNullable<ClientOptions['interceptors']>['workflow'], unknown[]>> {
  const own = interceptors?.workflow;
  if (own === undefined) return [];
  if (!Array.isArray(own)) throw new ConfigError('AgentPlugin: the client\'s interceptors.workflow must be an array (the plugin adds the tracing interceptor to it)');
  return own;
}

/**
 * Loaded only when tracing is on (nothing of OpenTelemetry loads without it), and
 * synchronously: Temporal configures a client without awaiting its plugins.
 */
function clientTracingInterceptor() {
  const otel = createRequire(import.meta.url)('@temporalio/interceptors-opentelemetry') as typeof import('@temporalio/interceptors-opentelemetry');
  return new otel.OpenTelemetryWorkflowClientInterceptor();
}
