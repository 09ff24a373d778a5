import { accessSync, constants, statSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError, parseEnv } from '../config/config-error';
import { TaskQueueEnvSchema } from '../config/task-queue';
import { LiveStreamEnvSchema } from '../config/live-stream';
import { compileHttpAllowlist, HTTP_ALLOWLIST_ENV, parseHttpAllowlist } from '../activities/tools/http-allowlist';
import { MAX_CONTENT_BYTES } from '../activities/tools/tool-activities';

const url = (name: string, fallback: string) =>
  z
    .string()
    .default(fallback)
    .refine((v) => /^https?:\/\//.test(v) && URL.canParse(v), { message: `${name} must be an http(s) URL` })
    .transform((v) => v.replace(/\/+$/, ''));

/**
 * Node keeps a timer of at most 2^31 - 1 ms (about 24.8 days); a longer one fires after
 * 1 ms, so `1e12` would mean "at once". Such values are refused, not shortened.
 */
export const MAX_TIMER_MS = 2_147_483_647;

const positiveMs = (fallback: number) =>
  z.coerce
    .number()
    .int()
    .positive()
    .max(MAX_TIMER_MS, { message: `must be at most ${MAX_TIMER_MS} ms (about 24.8 days, the longest timer Node keeps)` })
    .default(fallback);

const flag = (name: string) =>
  z
    .enum(['true', 'false', '1', '0'], { message: `${name} must be true or false` })
    .default('false')
    .transform((v) => v === 'true' || v === '1');

/**
 * The worker's environment, parsed once at start. How it reaches Temporal (address,
 * namespace, TLS, API key, profile) is read by `connection/`, by Temporal's own conventions.
 */
export const WorkerEnvSchema = TaskQueueEnvSchema.extend({
  ANTHROPIC_API_KEY: z.string().min(1).optional(),
  ANTHROPIC_BASE_URL: url('ANTHROPIC_BASE_URL', 'https://api.anthropic.com'),
  OPENAI_API_KEY: z.string().min(1).optional(),
  /** Includes `/v1`, as the OpenAI SDKs do; point it at Ollama or vLLM as `http://host:11434/v1`. */
  OPENAI_BASE_URL: url('OPENAI_BASE_URL', 'https://api.openai.com/v1'),
  GEMINI_API_KEY: z.string().min(1).optional(),
  GEMINI_BASE_URL: url('GEMINI_BASE_URL', 'https://generativelanguage.googleapis.com'),
  /** A provider response silent this long (no byte, not even a ping) is a dead socket: a retryable network_error. */
  AGENT_LLM_IDLE_TIMEOUT_MS: positiveMs(90_000),
  /** Where read_file and write_file may go. */
  AGENT_WORKSPACE: z.string().min(1).default('.data/workspace'),
  /** Hosts http_request may reach, comma-separated (`api.example.com,localhost:8080`). Empty: none. */
  AGENT_HTTP_ALLOWLIST: z
    .string()
    .default('')
    .transform(parseHttpAllowlist)
    // Checked here, with the rest of the environment, so a bad entry stops the worker before it connects.
    .superRefine((entries, ctx) => {
      for (const entry of entries) {
        try {
          compileHttpAllowlist([entry]);
        } catch (error) {
          // The entry quoted as JSON: one pasted with a control character in it stays one line.
          const said = `${HTTP_ALLOWLIST_ENV}: invalid entry "${entry}": `;
          const message = (error as Error).message;
          const why = message.startsWith(said) ? message.slice(said.length) : message;
          ctx.addIssue({ code: 'custom', message: `invalid entry ${JSON.stringify(entry)}: ${why}` });
          return;
        }
      }
    }),
  /** At most what one tool result may carry into history. */
  AGENT_HTTP_MAX_RESPONSE_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .max(MAX_CONTENT_BYTES, { message: `must be at most ${MAX_CONTENT_BYTES} bytes (1 MiB, the most a tool result carries)` })
    .default(64 * 1024),
  /**
   * The worker's copy of its sessions' logs, which spares the LLM activity a Query per
   * step (activities/llm/session-log-cache.ts), counted as JSON text: the heap it takes
   * is about 1.4 times that for typical events. Beyond it, the least recently used
   * sessions are read by Query again. 0 turns the copy off.
   */
  AGENT_LOG_CACHE_MB: z.coerce.number().nonnegative().default(128),
  /** Register the agent's search attributes in the namespace at start, instead of stopping when they are missing. */
  AGENT_REGISTER_SEARCH_ATTRIBUTES: flag('AGENT_REGISTER_SEARCH_ATTRIBUTES'),
  /** After SIGTERM: how long running activities get to finish; the process is gone by then, also when the server is not. */
  AGENT_SHUTDOWN_GRACE_MS: positiveMs(30_000),
  /** A JSON file of MCP servers in the `mcpServers` shape (config/mcp-config.ts); unset: no MCP tools. */
  AGENT_MCP_CONFIG: z.string().min(1).optional(),
  /** A JSON price table (activities/llm/price-table.ts) whose entries replace or add to the built-in prices. */
  AGENT_PRICES_FILE: z.string().min(1).optional(),
  /** A JSON file of fleet limits (docs/fleet-limits.md) every worker of the task queue holds LLM calls to together; unset: none. */
  AGENT_LIMITS_FILE: z.string().min(1).optional(),
  /**
   * A workflow bundle made ahead (`bundleWorkflowCode`) that the worker runs instead of
   * bundling `workflows/` at start (worker/workflow-bundle-file.ts). Checked here so a wrong
   * path stops the worker with the rest of the environment's mistakes.
   */
  AGENT_WORKFLOW_BUNDLE: z
    .string()
    .min(1)
    .refine(isReadableFile, { message: 'no readable file at that path (a bundle made by bundleWorkflowCode)' })
    .optional(),
  /** Worker Versioning: the Worker Deployment this worker is a version of, and its build id. Both or neither. */
  AGENT_DEPLOYMENT_NAME: z.string().min(1).optional(),
  AGENT_BUILD_ID: z.string().min(1).optional(),
  /** The live stream to the gateway (AGENT_LIVE_STREAM, AGENT_LIVE_STREAM_SOCKET): config/live-stream.ts. */
  ...LiveStreamEnvSchema.shape,
});
export type WorkerEnv = z.output<typeof WorkerEnvSchema>;

function isReadableFile(file: string): boolean {
  try {
    accessSync(file, constants.R_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Every bad variable in one line, each named; never echoes a value, which may be a key. */
export function parseWorkerEnv(env: Record<string, string | undefined>): WorkerEnv {
  const parsed = parseEnv(WorkerEnvSchema, env);
  const { AGENT_DEPLOYMENT_NAME: deployment, AGENT_BUILD_ID: buildId } = parsed;
  if (deployment !== undefined && buildId === undefined) throw new ConfigError('AGENT_BUILD_ID: required with AGENT_DEPLOYMENT_NAME (Worker Versioning needs both)');
  if (buildId !== undefined && deployment === undefined) throw new ConfigError('AGENT_DEPLOYMENT_NAME: required with AGENT_BUILD_ID (Worker Versioning needs both)');
  return parsed;
}
