import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Client } from '@temporalio/client';
import type { agentSession } from '../../workflows/session';
import { ModelRefSchema } from '../../contracts/model-ref';
import { splitList, type ClientEnv } from '../config';
import { ConfigError } from '../../config/config-error';
import { dim } from '../output';
import { connectClient, type SessionHandle } from '../sessions';
import { flushClientTracing } from '../../tracing/tracing-client';

/** One `npm run client -- <name>` command. */
export interface Command {
  name: string;
  /** The command line, as the usage text shows it. */
  synopsis: string;
  summary: string;
  /** Follows a session until told to stop: Ctrl-C stops following instead of killing the process. */
  followsLive?: boolean;
  run(argv: string[], context: CommandContext): Promise<number>;
}

export interface CommandContext {
  env: ClientEnv;
  /** Fires on Ctrl-C: a command that follows a session stops following and exits. */
  signal: AbortSignal;
}

type OptionSpecs = NonNullable<ParseArgsConfig['options']>;

/**
 * Accepted by every command. `--json` makes stdout one stable JSON document (`watch`: one
 * per line). `--verbose` is read by client/main.ts, which prints stack traces with it; it is
 * listed here so a command's strict parse accepts it. `--help` never reaches a command:
 * client/main.ts answers it first.
 */
export const COMMON_OPTIONS = {
  json: { type: 'boolean', default: false },
  verbose: { type: 'boolean', default: false },
} as const satisfies OptionSpecs;

type ParsedCommand<O extends OptionSpecs> = ReturnType<
  typeof parseArgs<{ args: string[]; options: typeof COMMON_OPTIONS & O; allowPositionals: true; strict: true }>
>;

/**
 * Parses one command's arguments strictly: an unknown or misspelt option is an error
 * naming it, never silently ignored (a dropped `--wait` would change what happens).
 */
export function parseCommandArgs<const O extends OptionSpecs>(command: Command, argv: string[], options: O, positionals: readonly string[]): ParsedCommand<O> {
  let parsed: ParsedCommand<O>;
  try {
    const config = { args: argv, options: { ...COMMON_OPTIONS, ...options }, allowPositionals: true, strict: true } as const;
    parsed = parseArgs(config) as ParsedCommand<O>;
  } catch (error) {
    // Node's message goes on, over several lines, about arguments starting with '-'; its first sentence is the point.
    const message = (error instanceof Error ? error.message : String(error)).split(/\.(?:\s|$)/)[0] ?? 'invalid arguments';
    throw new ConfigError(`${command.name}: ${message} (usage: ${command.synopsis})`);
  }
  const missing = positionals.slice(parsed.positionals.length);
  if (missing.length > 0) throw new ConfigError(`${command.name} needs ${missing.join(' and ')} (usage: ${command.synopsis})`);
  if (parsed.positionals.length > positionals.length) {
    throw new ConfigError(`${command.name}: unexpected argument "${parsed.positionals[positionals.length]}" (usage: ${command.synopsis}; quote a message with spaces)`);
  }
  return parsed;
}

/** Connects, runs `fn`, and closes the connection whatever happens. */
export async function withClient<T>(env: ClientEnv, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = await connectClient(env);
  try {
    return await fn(client);
  } finally {
    await client.connection.close();
    await flushClientTracing();
  }
}

export function sessionHandle(client: Client, workflowId: string): SessionHandle {
  return client.workflow.getHandle<typeof agentSession>(workflowId);
}

export function parseModel(model: string): string {
  const parsed = ModelRefSchema.safeParse(model);
  if (!parsed.success) throw new ConfigError(`bad --model "${model}": ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data;
}

/** `a,b , c` → `['a', 'b', 'c']`; an empty list is a mistake. */
export function parseList(option: string, text: string): string[] {
  const items = splitList(text);
  if (items.length === 0) throw new ConfigError(`${option} needs a comma-separated list, e.g. ${option} write_file,http_request`);
  return items;
}

export function parseWholeNumber(option: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || value < min || value > max) throw new ConfigError(`${option} must be a whole number from ${min} to ${max}, got "${text}"`);
  return value;
}

/**
 * Awaits a Query or an Update, saying on stderr when it takes long. Both need a worker:
 * with none polling, an Update waits (durably) until one comes, and a Query fails only
 * after the server gives up, so silence would look like a hang.
 */
export async function patiently<T>(env: ClientEnv, work: Promise<T>, afterMs = 3_000): Promise<T> {
  const timer = setTimeout(() => {
    console.error(dim(`… still waiting for the session to answer: is a worker running (npm run worker) on task queue ${env.AGENT_TASK_QUEUE}?`));
  }, afterMs);
  try {
    return await work;
  } finally {
    clearTimeout(timer);
  }
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}
