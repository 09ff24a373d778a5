import type { z } from 'zod';

/**
 * A setting or a command line that cannot work: a bad or missing variable, flag, file or
 * `temporal.toml` key. The message is one line that names every setting at fault and
 * never repeats a value, which may be a key. The client exits 2 on it (fix the command or
 * the environment); the worker and the codec server exit 1.
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Every issue of a parse, `NAME: what is wrong`, one per variable, in one line. */
export function describeEnvIssues(error: z.ZodError): string {
  const lines = new Map<string, string>();
  for (const issue of error.issues) {
    const name = String(issue.path[0] ?? 'environment');
    if (!lines.has(name)) lines.set(name, `${name}: ${issue.message}`);
  }
  return [...lines.values()].join('; ');
}

/**
 * Parses the environment with `schema`, a blank variable counting as unset. Throws one
 * {@link ConfigError} naming every bad variable.
 */
export function parseEnv<S extends z.ZodType>(schema: S, env: Record<string, string | undefined>): z.output<S> {
  const blankless = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = schema.safeParse(blankless);
  if (!parsed.success) throw new ConfigError(describeEnvIssues(parsed.error));
  return parsed.data;
}

/**
 * Runs each reader of one process's settings and reports all their mistakes together:
 * the person fixing the environment learns of every bad variable at once, not one per run.
 */
export function readAllSettings<const T extends readonly (() => unknown)[]>(readers: T): { -readonly [K in keyof T]: ReturnType<T[K]> } {
  const problems: string[] = [];
  const results = readers.map((read) => {
    try {
      return read();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(error.message);
      return undefined;
    }
  });
  if (problems.length > 0) throw new ConfigError(problems.join('; '));
  return results as { -readonly [K in keyof T]: ReturnType<T[K]> };
}
