import { z } from 'zod';
import { loadConnectionConfig, type TemporalConnectionConfig } from '../connection/connection-config';
import { parseEnv, readAllSettings } from '../config/config-error';
import { TaskQueueEnvSchema } from '../config/task-queue';
import { SessionInputSchema } from '../contracts/api';
import { ModelRefSchema } from '../contracts/model-ref';
import type { ModelWindowTable } from '../contracts/model-windows';
import { loadModelWindows } from './models-file';

/** `a,b , c` → `['a', 'b', 'c']`; blanks dropped. */
export function splitList(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** The first item that comes again. */
const twiceIn = (items: string[]) => items.find((item, i) => items.indexOf(item) !== i);

/**
 * The client's environment, parsed once; the same names as the worker's. How it reaches
 * Temporal is read by `connection/`, as Temporal's CLI reads it (`connection` below).
 */
export const ClientEnvSchema = TaskQueueEnvSchema.extend({
  AGENT_MODEL: ModelRefSchema.default('anthropic:claude-sonnet-4-5'),
  /**
   * Defaults of `start` and `run` for the session settings of the same names, checked by
   * the session's own schema; unset, the session's defaults apply.
   */
  AGENT_MAX_STEPS: z.string().transform(Number).pipe(SessionInputSchema.shape.maxSteps.unwrap()).optional(),
  AGENT_MAX_TOKENS: z.string().transform(Number).pipe(SessionInputSchema.shape.maxTokens.unwrap()).optional(),
  /** Comma-separated built-in tool names, e.g. `calculator,read_file`. */
  AGENT_TOOLS: z
    .string()
    .transform(splitList)
    .refine((tools) => new Set(tools).size === tools.length, { error: (issue) => `gives ${twiceIn(issue.input as string[])} twice` })
    .pipe(SessionInputSchema.shape.tools.unwrap())
    .optional(),
  /**
   * A JSON file of model windows, `{ "provider:model": { "contextWindow": N, "maxOutputTokens": N } }`,
   * replacing or adding to MODEL_WINDOWS: `start` and `run` give a session its model's window from it.
   */
  AGENT_MODELS_FILE: z.string().optional(),
  /** Where the Temporal UI is served, for the links the client prints. */
  TEMPORAL_UI_URL: z
    .string()
    .default('http://localhost:8233')
    .transform((v) => v.replace(/\/+$/, '')),
});
export type ClientEnv = z.output<typeof ClientEnvSchema> & {
  connection: TemporalConnectionConfig;
  /** MODEL_WINDOWS with AGENT_MODELS_FILE's entries over it. */
  modelWindows: ModelWindowTable;
};

/** Every bad variable, the connection's included, in one line; never a value. */
export function parseClientEnv(env: Record<string, string | undefined>): ClientEnv {
  const [parsed, connection, modelWindows] = readAllSettings([
    () => parseEnv(ClientEnvSchema, env),
    () => loadConnectionConfig(env),
    // A blank variable is unset, as everywhere in the environment.
    () => loadModelWindows(env.AGENT_MODELS_FILE || undefined),
  ]);
  return { ...parsed, connection, modelWindows };
}
