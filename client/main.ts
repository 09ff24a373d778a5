/**
 * `npm run client -- <command>`: drive, watch and inspect agent sessions. Every command
 * is a thin shell over a library function exported from `client/index.ts`; this file is
 * the process around the command line (client/command-line.ts).
 */
import { DEFAULT_SERVER, failureLine, runCommandLine } from './command-line';

const verbose = process.argv.includes('--verbose');
const interrupt = new AbortController();
/** Where the command went, for error lines; the defaults until the environment is read. */
let server = DEFAULT_SERVER;

/**
 * Exits once everything written to stdout has left the process: stdout on a pipe is
 * written asynchronously, and an exit right after a large write (`log --json` of a long
 * session) would cut the output short.
 */
function exitAfterOutput(code: number): void {
  process.stdout.write('', () => process.exit(code));
}

runCommandLine(process.argv.slice(2), {
  env: process.env,
  signal: interrupt.signal,
  onServer: (to) => {
    server = to;
  },
  // The first Ctrl-C asks the command to stop following (the session goes on) and
  // exit 130; a second one, for a command stuck on the network, exits at once.
  onFollowsLive: () =>
    process.on('SIGINT', () => {
      if (interrupt.signal.aborted) process.exit(130);
      interrupt.abort();
    }),
}).then(exitAfterOutput, async (error: unknown) => {
  const { line, exitCode } = await failureLine(error, server);
  if (verbose) console.error(error);
  console.error(line);
  exitAfterOutput(exitCode);
});
