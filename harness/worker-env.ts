/**
 * The environment of a worker PROCESS (`spawnWorker`) that talks to the scripted LLM: what
 * the crash, restart, secrets, encryption and soak runs start. Whatever the developer's shell
 * holds for the agent (real provider keys, another task queue, an encryption key) is left
 * out, so a test worker can never reach a real provider or pick up someone else's settings.
 */
export interface AgentWorkerEnvOptions {
  /** `host:port` of the Temporal server. */
  address: string;
  namespace?: string;
  taskQueue: string;
  /** Base URL of the scripted LLM, used for all three providers. */
  llmUrl: string;
  /** Provider keys; default: harmless test keys. */
  keys?: { anthropic?: string; openai?: string; gemini?: string };
  /** Hosts http_request may reach (AGENT_HTTP_ALLOWLIST entries). */
  allowlist?: readonly string[];
  workspace?: string;
  /** Anything else, last, e.g. AGENT_ENCRYPTION_KEY. */
  extra?: Record<string, string>;
}

/** Prefixes of variables a test worker must not inherit: the agent's, and how to reach a Temporal server (connection/). */
const OWN_PREFIXES = ['AGENT_', 'ANTHROPIC_', 'OPENAI_', 'GEMINI_', 'TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE', 'TEMPORAL_API_KEY', 'TEMPORAL_TLS', 'TEMPORAL_PROFILE', 'TEMPORAL_CONFIG_FILE', 'TEMPORAL_GRPC_META_'];

export function agentWorkerEnv(options: AgentWorkerEnvOptions): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !OWN_PREFIXES.some((p) => name.startsWith(p))));
  const keys = options.keys ?? { anthropic: 'test-anthropic-key', openai: 'test-openai-key', gemini: 'test-gemini-key' };
  return {
    ...inherited,
    // A worker's INFO lines are what an operator reads; colour codes would only clutter the log file.
    NO_COLOR: '1',
    TEMPORAL_ADDRESS: options.address,
    TEMPORAL_NAMESPACE: options.namespace ?? 'default',
    AGENT_TASK_QUEUE: options.taskQueue,
    ANTHROPIC_BASE_URL: options.llmUrl,
    OPENAI_BASE_URL: options.llmUrl,
    GEMINI_BASE_URL: options.llmUrl,
    ...(keys.anthropic ? { ANTHROPIC_API_KEY: keys.anthropic } : {}),
    ...(keys.openai ? { OPENAI_API_KEY: keys.openai } : {}),
    ...(keys.gemini ? { GEMINI_API_KEY: keys.gemini } : {}),
    AGENT_WORKSPACE: options.workspace ?? '.data/test-workspace',
    AGENT_HTTP_ALLOWLIST: (options.allowlist ?? []).join(','),
    ...options.extra,
  };
}
