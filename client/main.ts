/**
 * `npm run client -- <command>`: drive, watch and inspect agent sessions. Every command
 * is a thin shell over a library function exported from `client/index.ts`.
 */
import { parseClientEnv, UsageError } from './config';
import { explainError } from './errors';
import { approveCommand, denyCommand } from './commands/approval';
import { cancelCommand } from './commands/cancel';
import type { Command } from './commands/command';
import { forkCommand } from './commands/fork';
import { historyCommand } from './commands/history';
import { listCommand } from './commands/list';
import { logCommand } from './commands/log';
import { retryPolicyCommand } from './commands/retry-policy';
import { runCommand } from './commands/run';
import { sendCommand } from './commands/send';
import { startCommand } from './commands/start';
import { watchCommand } from './commands/watch';

const COMMANDS: readonly Command[] = [
  startCommand,
  sendCommand,
  runCommand,
  watchCommand,
  logCommand,
  historyCommand,
  forkCommand,
  cancelCommand,
  retryPolicyCommand,
  approveCommand,
  denyCommand,
  listCommand,
];

const USAGE = `usage: npm run client -- <command> [options]

commands:
${COMMANDS.map((c) => `  ${c.synopsis}`).join('\n')}

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
  AGENT_MAX_STEPS, AGENT_MAX_TOKENS and AGENT_TOOLS (defaults of start and run: see start --help)`;

async function main(argv: string[], signal: AbortSignal): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(USAGE);
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) throw new UsageError(`unknown command "${name}" (commands: ${COMMANDS.map((c) => c.name).join(', ')}; try --help)`);
  if (rest.includes('--help')) {
    console.log(`usage: npm run client -- ${command.synopsis}\n\n${command.summary}`);
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

main(process.argv.slice(2), interrupt.signal).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const { message, exitCode } = explainError(error, server);
    if (verbose) console.error(error);
    console.error(`client: ${message}`);
    process.exit(exitCode);
  },
);
