import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseClientEnv } from '../client/config';
import { SESSION_FLAGS, sessionOptionsFrom } from '../client/commands/session-options';
import { SessionInputSchema } from '../contracts/api';
import { COMPACT_AT, SESSION_LIMITS } from '../contracts/session-settings';
import { runEntry, type CliResult } from './support/cli';
import { runInProcess } from './support/cli-in-process';

// Nothing listens here: a command that got as far as the server would fail with exit 1
// and "cannot reach the Temporal server", so exit 2 proves the refusal came first.
const NO_SERVER = { TEMPORAL_ADDRESS: 'localhost:1' };
/** The CLI's process, as a user starts it: for a few cases of each kind. */
const cli = (args: string[], env: Record<string, string> = {}) => runEntry('client/main.ts', args, { ...NO_SERVER, ...env });
/** The same command line in this process: the rest, at a millisecond each rather than a process start. */
const inProcess = (args: string[], env: Record<string, string> = {}) => runInProcess(args, { ...NO_SERVER, ...env });

function expectRefusal(result: CliResult, line: string): void {
  expect(result.code, result.stderr).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr.trim().split('\n')).toEqual([line]);
}

const MISSING = path.join(import.meta.dirname, 'no-such-dir', 'system.txt');

describe('a bad session setting on start and run', () => {
  const badFlags: [string[], string][] = [
    [['--max-steps', '0'], 'client: --max-steps must be a whole number from 1 to 500, got "0"'],
    [['--max-tokens', '1e9'], 'client: --max-tokens must be a whole number from 1 to 200000, got "1e9"'],
    [['--tools', 'calculator,abacus'], 'client: --tools: unknown tool "abacus" (tools: calculator, http_request, read_file, write_file)'],
    [['--tools', 'calculator,read_file,calculator'], 'client: --tools gives calculator twice'],
    [['--mcp', 'docs,fs,docs'], 'client: --mcp gives docs twice'],
    [['--approve-tools', 'write_file, write_file'], 'client: --approve-tools gives write_file twice'],
    [['--tool-timeout', 'read_file:5'], 'client: --tool-timeout needs NAME=SECONDS, e.g. read_file=30, got "read_file:5"'],
    [['--tool-timeout', 'read_file=0'], 'client: --tool-timeout read_file must be seconds from 0.1 to 86400, got "0"'],
    [['--tool-timeout', 'abacus=5'], 'client: --tool-timeout: unknown tool "abacus" (tools: calculator, http_request, read_file, write_file)'],
    [['--system-file', MISSING], `client: --system-file cannot read ${JSON.stringify(MISSING)}: ENOENT: no such file or directory`],
    [['--tool-concurrency', '33'], 'client: --tool-concurrency must be a whole number from 1 to 32, got "33"'],
    [['--idle-timeout', 'soon'], 'client: --idle-timeout must be seconds from 1 to 2592000, got "soon"'],
    [['--continue-as-new-after', '20001'], 'client: --continue-as-new-after must be a whole number from 20 to 20000, got "20001"'],
    [['--context-window', '999'], 'client: --context-window must be a whole number from 1000 to 10000000, got "999"'],
    [['--context-window', '200k'], 'client: --context-window must be a whole number from 1000 to 10000000, got "200k"'],
    [['--compact-at', '0.99'], 'client: --compact-at must be a fraction of the context window from 0.1 to 0.95, got "0.99"'],
    [['--compact-at', ''], 'client: --compact-at must be a fraction of the context window from 0.1 to 0.95, got ""'],
    [['--clear-tool-results-after', '0'], 'client: --clear-tool-results-after must be a whole number from 1 to 10000, got "0"'],
    [['--retry-policy', '{"maxRetries":99}'], 'client: --retry-policy: invalid retry policy: maxRetries: maxRetries must be at most 10'],
    [['--system', 'x', '--system-file', import.meta.filename], 'client: --system and --system-file both set system; give one of them'],
    [['--fallback', 'gpt-5'], 'client: --fallback: bad model "gpt-5": model must be "provider:model" with provider one of anthropic, openai, google (e.g. "anthropic:claude-sonnet-4-5")'],
    [['--fallback', 'openai:gpt-5,acme:x'], 'client: --fallback: bad model "acme:x": model must be "provider:model" with provider one of anthropic, openai, google (e.g. "anthropic:claude-sonnet-4-5")'],
    [['--fallback', 'openai:gpt-5, openai:gpt-5'], 'client: --fallback gives openai:gpt-5 twice'],
    [['--fallback', 'openai:a,openai:b,google:c,google:d,anthropic:e'], 'client: --fallback must name at most 4 models'],
    [['--fallback', ' , '], 'client: --fallback needs a comma-separated list of models, e.g. --fallback openai:gpt-5,google:gemini-2.5-pro'],
    [['--fallback-after', '0.5s'], 'client: --fallback-after must be a duration from 1 s to 4 m, such as 30s or 2m, got "0.5s"'],
    [['--fallback-after', '5m'], 'client: --fallback-after must be a duration from 1 s to 4 m, such as 30s or 2m, got "5m"'],
    [['--fallback-return-after', 'later'], 'client: --fallback-return-after must be a duration from 1 s to 168 h, such as 10m or 1h, got "later"'],
    [['--priority', 'urgent'], 'client: --priority must be interactive or batch, got "urgent"'],
  ];
  const commands = [['start'], ['run', '--prompt', 'hi']];

  it.each(badFlags)('%j is refused in one line naming the flag and what it accepts, exit code 2, before contacting the server', async (flags, line) => {
    for (const command of commands) expectRefusal(await inProcess([...command, ...flags, '--json']), line);
  });

  it('the CLI process refuses a bad flag of start and of run the same way', async () => {
    const [flags, line] = badFlags[0] ?? [[], ''];
    for (const command of commands) expectRefusal(await cli([...command, ...flags, '--json']), line);
  });

  it.each([
    ['AGENT_MAX_STEPS', '0', 'client: AGENT_MAX_STEPS: must be a whole number from 1 to 500'],
    ['AGENT_MAX_TOKENS', '1e9', 'client: AGENT_MAX_TOKENS: must be a whole number from 1 to 200000'],
    ['AGENT_TOOLS', 'calculator,abacus', 'client: AGENT_TOOLS: unknown tool "abacus" (tools: calculator, http_request, read_file, write_file)'],
    ['AGENT_TOOLS', 'read_file,read_file', 'client: AGENT_TOOLS: gives read_file twice'],
  ])('a bad %s=%s is refused in one line naming the variable, exit code 2', async (name, value, line) => {
    expectRefusal(await inProcess(['run', '--prompt', 'hi'], { [name]: value }), line);
  });
});

describe('a bad client environment', () => {
  it('names every bad variable, the connection\'s included, in one line and never their values', () => {
    let message = '';
    try {
      parseClientEnv({ AGENT_MODEL: 'gpt-4o', AGENT_MAX_STEPS: 'many', TEMPORAL_ADDRESS: 'secret host:1' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message.split('\n')).toHaveLength(1);
    expect(message).toMatch(/^AGENT_MODEL: .*; AGENT_MAX_STEPS: .*; TEMPORAL_ADDRESS: must be host:port$/);
    for (const value of ['gpt-4o', 'many', 'secret host']) expect(message).not.toContain(value);
  });

  it('stops the client with exit 2 and that one line', async () => {
    const result = await cli(['list'], { AGENT_TASK_QUEUE: '', AGENT_TOOLS: 'calculator,rm_rf', AGENT_MAX_TOKENS: '-1' });
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^client: AGENT_MAX_TOKENS: .*; AGENT_TOOLS: /)]);
  });
});

describe('--help of start and run', () => {
  // start's through the CLI's process (which reads the build's command manifest when there is one), run's in this one.
  it.each([
    ['start', cli],
    ['run', inProcess],
  ])('%s --help lists every session flag with its default', async (command, runner) => {
    const result = await runner([command, '--help']);
    expect(result.code).toBe(0);
    for (const flag of Object.values(SESSION_FLAGS)) {
      const at = result.stdout.indexOf(`\n  ${flag.usage}\n      `);
      expect(at, flag.usage).toBeGreaterThan(0);
      const help = result.stdout.slice(at).split('\n')[2] ?? '';
      expect(help, flag.usage).toMatch(/\(default\b[^)]*\)$/);
    }
    expect(result.stdout).toContain('It stops runaway loops, it does not limit a session');
  });
});

describe('the docs', () => {
  it('list every session flag of start and run with its default, and the AGENT_* defaults the session has', async () => {
    const docs = path.join(import.meta.dirname, '..', 'docs');
    const readme = [await readFile(path.join(docs, 'cli.md'), 'utf8'), await readFile(path.join(docs, 'configuration.md'), 'utf8')].join('\n').replaceAll('\\|', '|');
    for (const flag of Object.values(SESSION_FLAGS)) {
      const row = readme.split('\n').find((line) => line.startsWith(`| \`${flag.usage}\` | `));
      expect(row, flag.usage).toBeDefined();
      expect(row?.split(' | ')[1]?.trim(), flag.usage).not.toBe('');
    }
    expect(readme).toContain(`| \`AGENT_MAX_STEPS\` | \`${SESSION_LIMITS.maxSteps.default}\` |`);
    expect(readme).toContain(`| \`AGENT_MAX_TOKENS\` | \`${SESSION_LIMITS.maxTokens.default}\` |`);
    expect(readme).toContain('| `AGENT_TOOLS` |');
  });
});

describe('the flags check with the session schema', () => {
  const env = parseClientEnv({});
  const model = 'anthropic:claude-sonnet-4-5';

  it.each([
    ['max-steps', 'maxSteps'],
    ['max-tokens', 'maxTokens'],
    ['tool-concurrency', 'toolConcurrency'],
    ['continue-as-new-after', 'continueAsNewAfterEvents'],
    ['context-window', 'contextWindow'],
    ['clear-tool-results-after', 'clearToolResultsAfter'],
  ] as const)('--%s accepts exactly the range the session accepts for %s', (flag, setting) => {
    const { min, max } = SESSION_LIMITS[setting];
    for (const value of [min, max]) {
      expect(sessionOptionsFrom({ [flag]: String(value) }, env)[setting]).toBe(value);
      expect(SessionInputSchema.safeParse({ model, [setting]: value }).success).toBe(true);
    }
    for (const value of [min - 1, max + 1, min + 0.5]) {
      expect(() => sessionOptionsFrom({ [flag]: String(value) }, env)).toThrow(`--${flag} must be a whole number from ${min} to ${max}`);
      expect(SessionInputSchema.safeParse({ model, [setting]: value }).success).toBe(false);
    }
  });

  it.each([
    ['idle-timeout', 'idleTimeoutMs'],
    ['approval-timeout', 'approvalTimeoutMs'],
  ] as const)('--%s takes seconds within the range the session accepts for %s', (flag, setting) => {
    const { min, max } = SESSION_LIMITS[setting];
    expect(sessionOptionsFrom({ [flag]: String(min / 1000) }, env)[setting]).toBe(min);
    expect(sessionOptionsFrom({ [flag]: String(max / 1000) }, env)[setting]).toBe(max);
    expect(() => sessionOptionsFrom({ [flag]: String(max / 1000 + 1) }, env)).toThrow(`--${flag} must be seconds from ${min / 1000} to ${max / 1000}`);
    expect(SessionInputSchema.safeParse({ model, [setting]: max + 1000 }).success).toBe(false);
  });

  it('--compact-at accepts exactly the fractions the session accepts', () => {
    for (const value of [COMPACT_AT.min, 0.5, COMPACT_AT.max]) {
      expect(sessionOptionsFrom({ 'compact-at': String(value) }, env).compactAt).toBe(value);
      expect(SessionInputSchema.safeParse({ model, compactAt: value }).success).toBe(true);
    }
    for (const value of [0.09, 0.96, 1, 75]) {
      expect(() => sessionOptionsFrom({ 'compact-at': String(value) }, env)).toThrow(`--compact-at must be a fraction of the context window from ${COMPACT_AT.min} to ${COMPACT_AT.max}`);
      expect(SessionInputSchema.safeParse({ model, compactAt: value }).success).toBe(false);
    }
  });

  it.each([
    ['fallback-after', 'fallbackAfterMs'],
    ['fallback-return-after', 'fallbackReturnAfterMs'],
  ] as const)('--%s takes a duration within the range the session accepts for %s', (flag, setting) => {
    const { min, max } = SESSION_LIMITS[setting];
    expect(sessionOptionsFrom({ [flag]: `${min / 1000}s` }, env)[setting]).toBe(min);
    expect(sessionOptionsFrom({ [flag]: `${max / 60_000}m` }, env)[setting]).toBe(max);
    expect(() => sessionOptionsFrom({ [flag]: `${max + 1}ms` }, env)).toThrow(`--${flag} must be a duration from ${min / 1000} s to `);
    expect(SessionInputSchema.safeParse({ model, [setting]: max + 1 }).success).toBe(false);
  });

  it('reads --fallback as the session\'s fallbacks, in order, and --priority as its priority', () => {
    expect(sessionOptionsFrom({ fallback: 'openai:gpt-5, google:gemini-2.5-pro', priority: 'batch' }, env)).toMatchObject({ fallbacks: ['openai:gpt-5', 'google:gemini-2.5-pro'], priority: 'batch' });
  });

  it('turns --retry-policy off into no retries, default into the default ladder, JSON into a whole policy', () => {
    expect(sessionOptionsFrom({ 'retry-policy': 'off' }, env).retryPolicy).toBeNull();
    expect('retryPolicy' in sessionOptionsFrom({ 'retry-policy': 'default' }, env)).toBe(false);
    expect(sessionOptionsFrom({ 'retry-policy': '{"maxRetries":3}' }, env).retryPolicy).toMatchObject({ maxRetries: 3, baseDelayMs: 1_000 });
  });
});
