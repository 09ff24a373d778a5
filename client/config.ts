import { z } from 'zod';
import { loadConnectionConfig, type TemporalConnectionConfig } from '../connection/connection-config';
import { ConnectionConfigError } from '../connection/errors';
import { SessionInputSchema } from '../workflows/api';
import { ModelRefSchema } from '../workflows/model-ref';

/** `a,b , c` → `['a', 'b', 'c']`; blanks dropped. */
export function splitList(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/**
 * The client's environment, parsed once; the same names as the worker's. How it reaches
 * Temporal is read by `connection/`, as Temporal's CLI reads it (`connection` below).
 */
export const ClientEnvSchema = z.object({
  AGENT_TASK_QUEUE: z.string().min(1).default('agent'),
  AGENT_MODEL: ModelRefSchema.default('anthropic:claude-sonnet-4-5'),
  /**
   * Defaults of `start` and `run` for the session settings of the same names, checked by
   * the session's own schema; unset, the session's defaults apply.
   */
  AGENT_MAX_STEPS: z.string().transform(Number).pipe(SessionInputSchema.shape.maxSteps.unwrap()).optional(),
  AGENT_MAX_TOKENS: z.string().transform(Number).pipe(SessionInputSchema.shape.maxTokens.unwrap()).optional(),
  /** Comma-separated built-in tool names, e.g. `calculator,read_file`. */
  AGENT_TOOLS: z.string().transform(splitList).pipe(SessionInputSchema.shape.tools.unwrap()).optional(),
  /** Where the Temporal UI is served, for the links the client prints. */
  TEMPORAL_UI_URL: z
    .string()
    .default('http://localhost:8233')
    .transform((v) => v.replace(/\/+$/, '')),
});
export type ClientEnv = z.output<typeof ClientEnvSchema> & { connection: TemporalConnectionConfig };

export function parseClientEnv(env: Record<string, string | undefined>): ClientEnv {
  const blankless = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = ClientEnvSchema.safeParse(blankless);
  if (parsed.success) return { ...parsed.data, connection: connectionConfigOf(env) };
  const issue = parsed.error.issues[0];
  throw new UsageError(`${String(issue?.path[0] ?? 'environment')}: ${issue?.message ?? 'invalid'}`);
}

function connectionConfigOf(env: Record<string, string | undefined>): TemporalConnectionConfig {
  try {
    return loadConnectionConfig(env);
  } catch (error) {
    throw error instanceof ConnectionConfigError ? new UsageError(error.message) : error;
  }
}

/** A mistake of the caller's: printed as one line, never with a stack trace. */
export class UsageError extends Error {
  override name = 'UsageError';
}
