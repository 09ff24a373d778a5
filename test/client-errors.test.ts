import { QueryNotRegisteredError } from '@temporalio/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { explainError } from '../client/errors';
import { endSession, startSession } from '../client/sessions';
import { clientEnvOf, useAgentHarness } from './support/agent-harness';
import { runEntry, type CliResult } from './support/cli';
import { runInProcess } from './support/cli-in-process';
import { spawnEntry } from './support/spawn-cli';

const h = useAgentHarness();
let closedId: string;
beforeAll(async () => {
  const closed = await startSession(h().client, h().env, { model: 'anthropic:echo-closed' });
  await endSession(closed);
  await closed.result();
  closedId = closed.workflowId;
});

const env = () => clientEnvOf(h());
/** The CLI's process, as a user starts it: for the cases that are about the process (exit code, stack trace, help, waiting). */
const cli = (args: string[], extra: Record<string, string> = {}) => runEntry('client/main.ts', args, { ...env(), ...extra });
/** The same command line in this process (client/command-line.ts, as the CLI runs it): the rest, a millisecond each. */
const inProcess = (args: string[], extra: Record<string, string> = {}) => runInProcess(args, { ...env(), ...extra });

/** One line on stderr, nothing on stdout, no stack trace. */
function expectOneLine(result: CliResult, code: number, message: string | RegExp): void {
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(code);
  expect(result.stdout).toBe('');
  const lines = result.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(typeof message === 'string' ? new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) : message);
}

const UNKNOWN = 'session-that-never-was';
const withUnknownId: [string, string[]][] = [
  ['send', ['send', UNKNOWN, 'hi']],
  ['send --wait', ['send', UNKNOWN, 'hi', '--wait']],
  ['watch', ['watch', UNKNOWN]],
  ['log', ['log', UNKNOWN]],
  ['history', ['history', UNKNOWN, '--out', '/tmp/never-written.json']],
  ['fork', ['fork', UNKNOWN]],
  ['cancel', ['cancel', UNKNOWN]],
  ['retry-policy', ['retry-policy', UNKNOWN, 'off']],
  ['approve', ['approve', UNKNOWN, 'toolu_1']],
  ['deny', ['deny', UNKNOWN, 'toolu_1']],
];

describe('client errors: one clear line, a non-zero exit code, no stack trace', () => {
  it.each(withUnknownId)('%s names an unknown session id', async (_name, args) => {
    expectOneLine(await inProcess(args), 1, `client: no session "${UNKNOWN}" in namespace "default"`);
  });

  it.each([
    ['send', ['send', '<closed>', 'hi']],
    ['cancel', ['cancel', '<closed>']],
    ['retry-policy', ['retry-policy', '<closed>', 'default']],
    ['approve', ['approve', '<closed>', 'toolu_1']],
    ['deny', ['deny', '<closed>', 'toolu_1', '--reason', 'no']],
  ])('%s says that the session has ended', async (_name, args) => {
    const result = await inProcess(args.map((a) => (a === '<closed>' ? closedId : a)));
    expectOneLine(result, 1, `client: session ${closedId} has ended: it takes no more messages, decisions or policy changes`);
  });

  it('the CLI process says so in one line with exit code 1, and exit code 2 for a mistake in the command line', async () => {
    expectOneLine(await cli(['send', UNKNOWN, 'hi']), 1, `client: no session "${UNKNOWN}" in namespace "default"`);
    expectOneLine(await cli(['send', closedId, 'hi']), 1, `client: session ${closedId} has ended: it takes no more messages, decisions or policy changes`);
    expectOneLine(await cli(['frobnicate'], { TEMPORAL_ADDRESS: 'localhost:1' }), 2, /^client: unknown command "frobnicate" /);
  });

  it('still reads the log of an ended session', async () => {
    const result = await inProcess(['log', closedId, '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([]);
  });

  it.each([
    ['start', ['start', '--model', 'mistral:large']],
    ['run', ['run', '--prompt', 'hi', '--model', 'anthropic']],
  ])('%s refuses a bad model string with exit code 2 before contacting the server', async (_name, args) => {
    expectOneLine(await inProcess(args, { TEMPORAL_ADDRESS: 'localhost:1' }), 2, /^client: bad --model ".*": model must be "provider:model" with provider one of anthropic, openai, google/);
  });

  it('refuses a bad AGENT_MODEL, naming the variable', async () => {
    expectOneLine(await inProcess(['start'], { AGENT_MODEL: 'gpt-4o' }), 2, /^client: AGENT_MODEL: model must be "provider:model"/);
  });

  // Through the process, all four at once: each waits out the connect timeout (5 s), idle.
  it.concurrent.each([['start'], ['list'], ['log', 'session-x'], ['send', 'session-x', 'hi']])('%s says in one line that the server cannot be reached', async (...args) => {
    expectOneLine(await cli(args, { TEMPORAL_ADDRESS: 'localhost:1' }), 1, /^client: cannot reach the Temporal server at localhost:1 \(TEMPORAL_ADDRESS\): /);
  });

  it.each([
    [['frobnicate'], /^client: unknown command "frobnicate" \(commands: start, send, run, watch, log, history, fork, cancel, end, tools, refresh-tools, retry-policy, budget, approve, deny, list, show, agents, serve, keys; try --help\)$/],
    [['send', 'session-x', 'hi', '--wiat'], /^client: send: Unknown option '--wiat' \(usage: send <id> TEXT \[--output-schema FILE\] \[--wait\] \[--json\]\)$/],
    [['send', 'session-x'], /^client: send needs TEXT \(usage: send <id> TEXT/],
    [['send', 'session-x', 'two', 'words'], /^client: send: unexpected argument "words" .*quote a message with spaces/],
    [['send', 'session-x', '   '], /^client: a message must not be empty$/],
    [['start', '--approval-timeout', 'soon'], /^client: --approval-timeout must be seconds from 1 to 604800, got "soon"$/],
    [['fork', 'session-x', '--at', '-1'], /^client: fork: Option '--at' argument is ambiguous \(usage: fork <id> \[--at EVENT\]/],
    [['fork', 'session-x', '--at=-1'], /^client: --at must be a whole number from 0 to \d+, got "-1"$/],
  ])('%j is a command-line mistake: exit code 2', async (args, message) => {
    expectOneLine(await inProcess(args, { TEMPORAL_ADDRESS: 'localhost:1' }), 2, message);
  });

  it('prints the stack trace with --verbose', async () => {
    const result = await cli(['log', UNKNOWN, '--verbose']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('WorkflowNotFoundError');
    expect(result.stderr).toMatch(/\n\s+at /);
    expect(result.stderr.trim().split('\n').at(-1)).toBe(`client: no session "${UNKNOWN}" in namespace "default"`);
  });

  it('prints the usage with --help, and each command describes itself', async () => {
    const usage = await cli(['--help']);
    expect(usage.code).toBe(0);
    for (const command of ['start', 'send', 'run', 'watch', 'log', 'history', 'fork', 'cancel', 'retry-policy', 'approve', 'deny', 'list']) {
      expect(usage.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    }
    const send = await inProcess(['send', '--help']);
    expect(send.code).toBe(0);
    expect(send.stdout).toMatch(/^usage: npm run client -- send <id> TEXT \[--output-schema FILE\] \[--wait\] \[--json\]\n\nSends a user message/);
  });

  it('says, while it waits, that an Update needs a worker when none is polling the task queue', async () => {
    const session = await startSession(h().client, h().env, { model: 'anthropic:echo-no-worker' });
    await h().stopWorker();
    let restarted = false;
    const waiting = spawnEntry('client/main.ts', ['retry-policy', session.workflowId, 'off'], env());
    try {
      await waiting.waitFor(new RegExp(`still waiting for the session to answer: is a worker running \\(npm run worker\\) on task queue ${h().taskQueue}\\?`));
      // The Update is not lost: a worker that comes back applies it.
      await h().startWorker();
      restarted = true;
      expect(await waiting.exited).toBe(0);
      expect(waiting.stdout()).toContain('off (one attempt per LLM call)');
    } finally {
      waiting.kill();
      if (!restarted) await h().startWorker();
    }
    await session.terminate('test cleanup');
  });
});

describe('a failed Query, explained (unit)', () => {
  const context = { namespace: 'default', address: 'localhost:7233' };
  it('calls a workflow without the handler not an agent session', () => {
    const error = new QueryNotRegisteredError('Workflow did not register a handler for state. Registered queries: [__stack_trace]', 3);
    expect(explainError(error, context)).toEqual({ message: 'that workflow is not an agent session (Workflow did not register a handler for state. Registered queries: [__stack_trace])', exitCode: 1 });
  });

  it('reports a session that failed to answer as such, with its reason', () => {
    const error = new QueryNotRegisteredError('Nondeterminism error: Activity machine does not handle this event\nat replay', 3);
    expect(explainError(error, context)).toEqual({ message: 'the session could not answer: Nondeterminism error: Activity machine does not handle this event', exitCode: 1 });
  });
});
