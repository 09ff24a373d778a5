import type { Dispatcher } from 'undici';
import { z } from 'zod';
import { BUILTIN_PRICE_TABLE, PriceFileSchema, type ModelPrice, type PriceTable } from '../activities/llm/price-table';
import { compileHttpAllowlist } from '../activities/tools/http-allowlist';
import { MAX_CONTENT_BYTES } from '../activities/tools/tool-activities';
import { ConfigError } from '../config/config-error';
import { NO_MCP_SERVERS, type McpConfig } from '../config/mcp-config';
import type { EncryptionKey } from '../encryption/encryption-key';
import type { Tracing } from '../tracing/tracing-provider';
import type { CustomTool } from '../contracts/tools/custom-tool';
import type { AgentDefinition } from '../contracts/agents/agent-definition';
import type { LiveStreamPublisher } from '../contracts/live-stream';
import { FleetLimitsSchema } from '../contracts/fleet-limits';
import { MAX_TIMER_MS, parseWorkerEnv } from './config';

/**
 * The turnkey worker's defaults are the plugin's: a program that gives the plugin nothing
 * gets what `npm run worker` gets with an empty environment.
 */
const DEFAULTS = parseWorkerEnv({});

const baseUrl = (fallback: string) =>
  z
    .string({ error: 'must be an http(s) URL' })
    .default(fallback)
    .refine((v) => /^https?:\/\//.test(v) && URL.canParse(v), { message: 'must be an http(s) URL' })
    .transform((v) => v.replace(/\/+$/, ''));

// Never echo an API key: the messages name the field only.
const provider = (fallback: string) =>
  z
    .object({
      apiKey: z.string({ error: 'must be a non-empty string' }).min(1, { error: 'must be a non-empty string' }).optional(),
      baseUrl: baseUrl(fallback),
    })
    .strict()
    .default({ baseUrl: fallback });

const wholeNumber = (max: number, why: string) =>
  z.number({ error: 'must be a whole number' }).int({ error: 'must be a whole number' }).positive({ error: 'must be positive' }).max(max, { error: `must be at most ${max} (${why})` });

const HttpAllowlistSchema = z.array(z.string({ error: 'every entry must be a string' })).superRefine((entries, ctx) => {
  entries.forEach((entry, i) => {
    try {
      compileHttpAllowlist([entry]);
    } catch (error) {
      // The compiler speaks of the environment variable; here the option is at fault. Quoted as JSON: one line whatever the entry holds.
      const why = (error as Error).message.replace(/^[A-Z_]+: invalid entry "[^]*?": /, '');
      ctx.addIssue({ code: 'custom', path: [i], message: `invalid entry ${JSON.stringify(entry)}: ${why}` });
    }
  });
});

const isMcpConfig = (v: unknown): v is McpConfig => v instanceof Map;
const isEncryptionKey = (v: unknown): v is EncryptionKey => typeof v === 'object' && v !== null && typeof (v as EncryptionKey).id === 'string' && Buffer.isBuffer((v as EncryptionKey).bytes) && (v as EncryptionKey).bytes.length === 32;
const isTracing = (v: unknown): v is Tracing => typeof v === 'object' && v !== null && 'processor' in v && 'config' in v;
const isPublisher = (v: unknown): v is LiveStreamPublisher => typeof (v as LiveStreamPublisher | null)?.publish === 'function' && typeof (v as LiveStreamPublisher).close === 'function';
const isDispatcher = (v: unknown): v is Dispatcher => typeof v === 'object' && v !== null && typeof (v as Dispatcher).dispatch === 'function';

/**
 * What `new AgentPlugin(options)` accepts, checked once when the plugin is made: a mistake
 * is one `ConfigError` naming each option at fault, before any worker or client uses it.
 */
export const AgentPluginOptionsSchema = z
  .object({
    /** Where each provider is reached, and its key; a provider without a key answers every call with `auth_error`. */
    providers: z
      .object({ anthropic: provider(DEFAULTS.ANTHROPIC_BASE_URL), openai: provider(DEFAULTS.OPENAI_BASE_URL), google: provider(DEFAULTS.GEMINI_BASE_URL) })
      .strict()
      .default({ anthropic: { baseUrl: DEFAULTS.ANTHROPIC_BASE_URL }, openai: { baseUrl: DEFAULTS.OPENAI_BASE_URL }, google: { baseUrl: DEFAULTS.GEMINI_BASE_URL } }),
    /** USD per million tokens by `provider:model`, replacing or adding to the built-in prices (the shape of AGENT_PRICES_FILE's `models`). */
    prices: PriceFileSchema.shape.models.optional(),
    /**
     * Fleet limits (docs/fleet-limits.md; AGENT_LIMITS_FILE's `limits`): every LLM call of the
     * task queue's sessions, on every worker given the same limits, is held to them together.
     * The worker's workflows must include `agentLimiter` (the plugin's own do). None by default.
     */
    limits: FleetLimitsSchema.default([]),
    /** The MCP servers sessions may use: what `readWorkerFiles` read from an AGENT_MCP_CONFIG file. */
    mcp: z.custom<McpConfig>(isMcpConfig, { error: 'must be the servers readWorkerFiles read (a Map of name to server)' }).default(NO_MCP_SERVERS),
    /** Hosts http_request may reach (`api.example.com`, `localhost:8080`, `*.example.com`); none by default. */
    httpAllowlist: HttpAllowlistSchema.default([]),
    /** Where read_file and write_file may go. */
    workspace: z.string({ error: 'must be a folder path' }).min(1, { error: 'must be a folder path' }).default(DEFAULTS.AGENT_WORKSPACE),
    /** At most what one http_request result carries into history. */
    httpMaxResponseBytes: wholeNumber(MAX_CONTENT_BYTES, '1 MiB, the most a tool result carries').default(DEFAULTS.AGENT_HTTP_MAX_RESPONSE_BYTES),
    /** A provider response silent this long is a dead socket: a retryable network_error. */
    llmIdleTimeoutMs: wholeNumber(MAX_TIMER_MS, 'the longest timer Node keeps').default(DEFAULTS.AGENT_LLM_IDLE_TIMEOUT_MS),
    /** The worker's copy of its sessions' logs, in MB of JSON text; 0 turns it off (AGENT_LOG_CACHE_MB). */
    logCacheMb: z.number({ error: 'must be a number of MB' }).nonnegative({ error: 'must not be negative' }).default(DEFAULTS.AGENT_LOG_CACHE_MB),
    /** Payload encryption: the key `encryptionKeyFromEnv` reads (AES-256-GCM); absent, payloads are plain JSON. */
    encryption: z.custom<EncryptionKey>(isEncryptionKey, { error: 'must be an encryption key ({ id, bytes } of 32 bytes, as encryptionKeyFromEnv returns)' }).optional(),
    /** OpenTelemetry, as `startTracing` started it; absent, no interceptor is added and nothing of OpenTelemetry loads. */
    tracing: z.custom<Tracing>(isTracing, { error: 'must be what startTracing returned' }).optional(),
    /** The HTTP client of the LLM and http_request calls; by default undici's global one. */
    dispatcher: z.custom<Dispatcher>(isDispatcher, { error: 'must be an undici Dispatcher' }).optional(),
    /** Tools of one's own (`defineTool`, docs/tools.md#your-own-tools) that sessions may be offered by name; two of one name are refused when the plugin is made. */
    tools: z.array(z.custom<CustomTool>((v) => typeof (v as CustomTool | null)?.run === 'function', { error: 'must be a tool made by defineTool' })).default([]),
    /** Agents (`defineAgent`, docs/agents.md) sessions may be started as by name; their own custom tools are served without being listed again in `tools`. */
    /**
     * The live stream (docs/live-stream.md): the model's text as it streams, the sessions'
     * log events and status, published to a gateway outside Temporal. The program closes it
     * after its worker stops. Absent: nothing is published.
     */
    liveStream: z.custom<LiveStreamPublisher>(isPublisher, { error: 'must be a live stream publisher (createLiveStreamPublisher)' }).optional(),
    agents: z.array(z.custom<AgentDefinition>((v) => Array.isArray((v as AgentDefinition | null)?.customTools), { error: 'must be an agent made by defineAgent' })).default([]),
  })
  .strict();

export type AgentPluginOptions = z.input<typeof AgentPluginOptionsSchema>;
export type AgentPluginSettings = z.output<typeof AgentPluginOptionsSchema>;

/** The options, checked: every option at fault named in one line, never a value (a key may be among them). */
export function parseAgentPluginOptions(options: unknown): AgentPluginSettings {
  const parsed = AgentPluginOptionsSchema.safeParse(options ?? {});
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((issue) => {
    const where = optionPath(issue.path);
    if (issue.code === 'unrecognized_keys') return `${issue.keys.map((key) => JSON.stringify(where ? `${where}.${key}` : key)).join(', ')}: not an option`;
    return `${where || 'options'}: ${issue.message}`;
  });
  throw new ConfigError(`AgentPlugin: ${lines.join('; ')}`);
}

/** `httpAllowlist[1]`, `providers.openai.baseUrl`: the option as a program spells it. */
function optionPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((text, key) => (typeof key === 'number' ? `${text}[${key}]` : text ? `${text}.${String(key)}` : String(key)), '');
}

/** The built-in prices with the options' entries over them. */
export function priceTableOf(prices: Readonly<Record<string, ModelPrice>> | undefined): PriceTable {
  return new Map([...BUILTIN_PRICE_TABLE, ...Object.entries(prices ?? {})]);
}
