/**
 * `npm run client -- <command>`: drive, watch and inspect agent sessions. Every command
 * is a thin shell over a library function exported from `client/index.ts`.
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

async function main(argv: string[], signal: AbortSignal): Promise<number> {
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
  if (command.followsLive) {
    // The first Ctrl-C asks the command to stop following (the session goes on) and
    // exit 130; a second one, for a command stuck on the network, exits at once.
    process.on('SIGINT', () => {
      if (interrupt.signal.aborted) process.exit(130);
      interrupt.abort();
    });
  }
  const env = parseClientEnv(process.env);
  server = { namespace: env.connection.namespace, address: env.connection.address };
  return command.run(rest, { env, signal });
}

const verbose = process.argv.includes('--verbose');
const interrupt = new AbortController();
/** Where the command went, for error lines; the defaults until the environment is read. */
let server = { namespace: 'default', address: 'localhost:7233' };

function commandHelp(command: CommandSummary): string {
  return `usage: npm run client -- ${command.synopsis}\n\n${command.summary}`;
}

/**
 * Exits once everything written to stdout has left the process: stdout on a pipe is
 * written asynchronously, and an exit right after a large write (`log --json` of a long
 * session) would cut the output short.
 */
function exitAfterOutput(code: number): void {
  process.stdout.write('', () => process.exit(code));
}

main(process.argv.slice(2), interrupt.signal).then(exitAfterOutput, async (error: unknown) => {
  const { explainError } = await import('./errors');
  const { message, exitCode } = explainError(error, server);
  if (verbose) console.error(error);
  console.error(`client: ${message}`);
  exitAfterOutput(exitCode);
});
