/**
 * What `npm run client -- <command>` does with its arguments, without the process around
 * it (client/main.ts: the exit code, Ctrl-C, stdout's flush): the tests run most of the
 * CLI's refusals through this in their own process, where starting the CLI for each one
 * would cost a second of a core.
 */
import { commandSummaries, readCommandManifest, type CommandSummary } from './command-manifest';

const usage = (commands: readonly CommandSummary[]) => `usage: npm run client -- <command> [options]   (or, after npm run build: npx agent <command>)

commands:
${commands.map((c) => `  ${c.synopsis}`).join('\n')}

every command:
  --json      one stable JSON document on stdout (watch: one per line), nothing else there
  --verbose   print stack traces
  --help      the command's description (npm run client -- send --help)

exit codes: 0 done (also a turn that failed: see its status), 1 the session or the server
  refused or failed, 2 a mistake in the command line, 130 interrupted (Ctrl-C)

environment: TEMPORAL_ADDRESS (localhost:7233), TEMPORAL_NAMESPACE (default), TEMPORAL_API_KEY,
  TEMPORAL_TLS, TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH, TEMPORAL_TLS_SERVER_CA_CERT_PATH,
  TEMPORAL_TLS_SERVER_NAME, TEMPORAL_PROFILE and TEMPORAL_CONFIG_FILE (temporal.toml, as the temporal CLI),
  AGENT_TASK_QUEUE (agent), AGENT_MODEL (anthropic:claude-sonnet-4-5), TEMPORAL_UI_URL (http://localhost:8233),
  AGENT_MAX_STEPS, AGENT_MAX_TOKENS and AGENT_TOOLS (defaults of start and run: see start --help),
  AGENT_MODELS_FILE (JSON of model context windows over the built-in table: see start --help, --context-window)`;

/** The server a command went to, named in its error line. */
export interface ServerRef {
  namespace: string;
  address: string;
}

/** Until the environment is read, an error line names the defaults. */
export const DEFAULT_SERVER: ServerRef = { namespace: 'default', address: 'localhost:7233' };

export interface CommandLineContext {
  /** The environment the command reads (the process's own, for the CLI). */
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  /** Called once the environment names the server, before the command runs. */
  onServer?(server: ServerRef): void;
  /** Called before a command that follows a session live (watch, send --wait) runs. */
  onFollowsLive?(): void;
}

/** Runs one command line to its exit code; a refusal or failure is thrown, for `failureLine`. */
export async function runCommandLine(argv: string[], context: CommandLineContext): Promise<number> {
  const [name, ...rest] = argv;
  // Help is answered from the build's manifest when there is one, before anything heavy loads.
  const summaries = readCommandManifest();
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage(summaries ?? commandSummaries((await import('./commands/index')).COMMANDS)));
    return name === undefined ? 2 : 0;
  }
  const summary = summaries?.find((c) => c.name === name);
  if (summary && rest.includes('--help')) {
    console.log(commandHelp(summary));
    return 0;
  }
  const [{ COMMANDS }, { parseClientEnv }, { ConfigError }] = await Promise.all([import('./commands/index'), import('./config'), import('../config/config-error')]);
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) throw new ConfigError(`unknown command "${name}" (commands: ${COMMANDS.map((c) => c.name).join(', ')}; try --help)`);
  if (rest.includes('--help')) {
    console.log(commandHelp(command));
    return 0;
  }
  if (command.followsLive) context.onFollowsLive?.();
  const env = parseClientEnv(context.env);
  context.onServer?.({ namespace: env.connection.namespace, address: env.connection.address });
  return command.run(rest, { env, signal: context.signal });
}

/** The one line (on stderr) and exit code of a command line that threw. */
export async function failureLine(error: unknown, server: ServerRef): Promise<{ line: string; exitCode: number }> {
  const { explainError } = await import('./errors');
  const { message, exitCode } = explainError(error, server);
  return { line: `client: ${message}`, exitCode };
}

function commandHelp(command: CommandSummary): string {
  return `usage: npm run client -- ${command.synopsis}\n\n${command.summary}`;
}
