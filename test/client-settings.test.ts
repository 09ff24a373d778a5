import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLog } from '../client/sessions';
import { stateQuery } from '../contracts/api';
import type { agentSession } from '../workflows/session';
import { clientEnvOf, useAgentHarness } from './support/agent-harness';
import { useTempDir } from './support/temp-dir';
import { runEntry } from './support/cli';
import { runInProcess } from './support/cli-in-process';
import { blocksRunBy, DocLines } from './support/doc-blocks';

const workspace = useTempDir('client-settings-');
const slowTarget = useSlowTarget();
const h = useAgentHarness(() => ({ env: { AGENT_WORKSPACE: workspace(), AGENT_HTTP_ALLOWLIST: slowTarget.host } }));

/** The CLI's process, as a user starts it: for the first command line here, so the process around it stays proven. */
const cliProcess = (args: string[], env: Record<string, string> = {}) => runEntry('client/main.ts', args, { ...clientEnvOf(h()), ...env });

/** The same command line in this process (client/command-line.ts, as the CLI runs it): the rest, without a process start each. */
const cli = (args: string[], env: Record<string, string> = {}) => runInProcess(args, { ...clientEnvOf(h()), ...env });
const runJson = async (args: string[], env: Record<string, string> = {}) => {
  const result = await cli(['run', '--json', ...args], env);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
};
const handle = (id: string) => h().client.workflow.getHandle<typeof agentSession>(id);

let models = 0;
const newModel = (name: string) => `settings-${name}-${++models}-${Date.now()}`;

/** 14 steps that each call the calculator, then an answer: a turn of exactly 15 steps. */
function scriptFifteenSteps(model: string): void {
  const calls = Array.from({ length: 14 }, (_, i) => ({ kind: 'tool_calls' as const, calls: [{ name: 'calculator', input: { expression: `${i}+1` } }] }));
  h().llm.script(model, ...calls, { kind: 'text', text: 'Done after fifteen steps.' });
}

describe('--max-steps', () => {
  it('lets a scripted 15-step turn finish with --max-steps 20: exactly 15 LLM requests, completed with reason answered', async () => {
    const model = newModel('fifteen');
    scriptFifteenSteps(model);
    const out = await runJson(['--prompt', 'count to fifteen', '--model', `anthropic:${model}`, '--max-steps', '20']);
    expect(out).toMatchObject({ status: 'completed', reason: 'answered', settings: { maxSteps: 20 } });
    expect(out.messages.at(-1)).toMatchObject({ role: 'assistant', text: 'Done after fifteen steps.' });
    expect(h().llm.requests({ model })).toHaveLength(15);
  });

  it('ends the same turn completed with reason step_limit after 5 LLM requests with --max-steps 5', async () => {
    const model = newModel('five');
    scriptFifteenSteps(model);
    const out = await runJson(['--prompt', 'count to fifteen', '--model', `openai:${model}`, '--max-steps', '5', '--keep']);
    expect(out).toMatchObject({ status: 'completed', reason: 'step_limit', settings: { maxSteps: 5 } });
    expect(out.failure).toBeUndefined();
    expect(h().llm.requests({ model })).toHaveLength(5);
    const events = await readLog(handle(out.workflowId));
    expect(events.filter((e) => e.type === 'step/start')).toHaveLength(5);
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', status: 'completed', reason: 'step_limit' });
    await handle(out.workflowId).terminate('test cleanup');
  });

  it('says so in the human output, and shows the step against the limit while the turn runs', async () => {
    const model = newModel('human');
    h().llm.script(model, { kind: 'tool_calls', calls: [{ name: 'calculator', input: { expression: '1+1' } }], delayMs: 1_500 });
    const result = await cliProcess(['run', '--prompt', 'loop', '--model', `anthropic:${model}`, '--max-steps', '1']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/turn 1 · step 1\/1 · llm anthropic:\S+ · running/);
    expect(result.stdout).toMatch(/^turn completed at the step limit of 1 steps \(--max-steps\)$/m);
  });
});

describe('--max-tokens', () => {
  const maxTokensOf = (body: unknown, provider: string): unknown => {
    const b = body as { max_tokens?: number; generationConfig?: { maxOutputTokens?: number } };
    return provider === 'google' ? b.generationConfig?.maxOutputTokens : b.max_tokens;
  };

  it.each(['anthropic', 'openai', 'google'])('reaches the provider request on %s, and AGENT_MAX_TOKENS sets the default it overrides', async (provider) => {
    const flagged = `echo-${newModel('tokens')}`;
    const out = await runJson(['--prompt', 'hi', '--model', `${provider}:${flagged}`, '--max-tokens', '8000'], { AGENT_MAX_TOKENS: '2000' });
    expect(out.settings.maxTokens).toBe(8000);
    const [request] = h().llm.requests({ model: flagged });
    expect(maxTokensOf(request?.body, provider)).toBe(8000);

    const fromEnv = `echo-${newModel('tokens-env')}`;
    await runJson(['--prompt', 'hi', '--model', `${provider}:${fromEnv}`], { AGENT_MAX_TOKENS: '2000' });
    expect(maxTokensOf(h().llm.requests({ model: fromEnv })[0]?.body, provider)).toBe(2000);
  });

  it('sends the raised default of 32000 output tokens when nothing sets it', async () => {
    const model = `echo-${newModel('tokens-default')}`;
    const out = await runJson(['--prompt', 'hi', '--model', `anthropic:${model}`]);
    expect(out.settings.maxTokens).toBe(32_000);
    expect(h().llm.requests({ model })[0]?.body).toMatchObject({ max_tokens: 32_000 });
  });
});

describe('--tools', () => {
  it('offers the model only the calculator with --tools calculator, and AGENT_TOOLS sets the default', async () => {
    const model = `echo-${newModel('tools')}`;
    const out = await runJson(['--prompt', 'hi', '--model', `anthropic:${model}`, '--tools', 'calculator']);
    expect(out.settings.tools).toEqual(['calculator']);
    const body = h().llm.requests({ model })[0]?.body as { tools: { name: string }[] };
    expect(body.tools.map((t) => t.name)).toEqual(['calculator']);

    const fromEnv = `echo-${newModel('tools-env')}`;
    await runJson(['--prompt', 'hi', '--model', `openai:${fromEnv}`], { AGENT_TOOLS: 'read_file, calculator' });
    const envBody = h().llm.requests({ model: fromEnv })[0]?.body as { tools: { function: { name: string } }[] };
    expect(envBody.tools.map((t) => t.function.name).sort()).toEqual(['calculator', 'read_file']);
  });
});

describe('--tool-timeout', () => {
  it('times out a slow GET with --tool-timeout http_request=1, and compensation answers the call', async () => {
    const model = newModel('slow-get');
    h().llm.script(model, {
      kind: 'tool_calls',
      calls: [
        { id: 'toolu_slow', name: 'http_request', input: { method: 'GET', url: `${slowTarget.url}/never` } },
        { id: 'toolu_quick', name: 'calculator', input: { expression: '2*3' } },
      ],
    });
    const started = Date.now();
    const out = await runJson(['--prompt', 'fetch it', '--model', `anthropic:${model}`, '--tool-timeout', 'http_request=1', '--keep']);
    expect(out).toMatchObject({ status: 'failed', failure: { type: 'start_to_close_timeout' } });
    // Three attempts of 1 s and 3 s of backoff; with http_request's own 60 s it would take minutes.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(out.settings.toolTimeouts).toEqual({ http_request: 1_000 });
    expect(slowTarget.requests()).toBeGreaterThanOrEqual(1);
    const events = await readLog(handle(out.workflowId));
    const results = events.flatMap((e) => (e.type === 'tool/result' ? [[e.callId, e.code]] : []));
    expect(results).toEqual([
      ['toolu_quick', 'ok'],
      ['toolu_slow', 'TOOL_OUTCOME_UNKNOWN'],
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', status: 'failed', failure: { type: 'start_to_close_timeout' } });
    await handle(out.workflowId).terminate('test cleanup');
  });
});

describe('the settings in force', () => {
  it('are reported by run --json and by the state Query, flags over defaults, defaults filled in', async () => {
    const model = `echo-${newModel('all')}`;
    const systemFile = path.join(workspace(), 'system.txt');
    await writeFile(systemFile, 'You are terse.\n');
    const out = await runJson(
      [
        '--prompt', 'hi',
        '--model', `google:${model}`,
        '--system-file', systemFile,
        '--max-steps', '7',
        '--max-tokens', '1234',
        '--tools', 'calculator,read_file',
        '--tool-timeout', 'read_file=2.5',
        '--tool-timeout', 'calculator=3',
        '--tool-concurrency', '3',
        '--idle-timeout', '600',
        '--retry-policy', 'off',
        '--continue-as-new-after', '500',
        '--approval-timeout', '90',
        '--keep',
      ],
      { AGENT_MAX_STEPS: '30' },
    );
    const settings = {
      maxSteps: 7,
      maxTokens: 1234,
      tools: ['calculator', 'read_file'],
      toolTimeouts: { read_file: 2_500, calculator: 3_000 },
      toolConcurrency: 3,
      idleTimeoutMs: 600_000,
      approvalRequired: [],
      approvalTimeoutMs: 90_000,
      continueAsNewAfterEvents: 500,
    };
    // toMatchObject: settings added later (and their defaults) appear here too.
    expect(out.settings).toMatchObject({ model: `google:${model}`, retryPolicy: null, ...settings });
    expect(out.settings.toolTimeouts).toEqual(settings.toolTimeouts);
    const state = await handle(out.workflowId).query(stateQuery);
    expect(state).toMatchObject({ model: `google:${model}`, system: 'You are terse.\n', retryPolicy: null });
    expect(state.settings).toMatchObject(settings);
    expect({ ...state.settings, model: state.model, retryPolicy: state.retryPolicy }).toEqual(out.settings);
    expect(h().llm.requests({ model })[0]?.body).toMatchObject({ systemInstruction: { parts: [{ text: 'You are terse.\n' }] } });
    await handle(out.workflowId).terminate('test cleanup');

    const plain = `echo-${newModel('defaults')}`;
    const defaults = await runJson(['--prompt', 'hi', '--model', `anthropic:${plain}`], { AGENT_MAX_STEPS: '30' });
    expect(defaults.settings).toMatchObject({
      model: `anthropic:${plain}`,
      retryPolicy: 'default',
      maxSteps: 30,
      maxTokens: 32_000,
      tools: ['calculator', 'http_request', 'read_file', 'write_file'],
      toolTimeouts: {},
      toolConcurrency: 4,
      idleTimeoutMs: 3_600_000,
      approvalRequired: [],
      approvalTimeoutMs: 3_600_000,
    });
  });

  it('applies --retry-policy JSON to the LLM call: {"maxRetries":1} makes two attempts of an overloaded provider', async () => {
    const model = newModel('retry');
    h().llm.script(model, { kind: 'status', status: 529 }, { kind: 'status', status: 529 }, { kind: 'text', text: 'too late' });
    const out = await runJson(['--prompt', 'hi', '--model', `anthropic:${model}`, '--retry-policy', '{"maxRetries":1,"baseDelayMs":100,"maxDelayMs":200}']);
    expect(out.settings.retryPolicy).toMatchObject({ maxRetries: 1, baseDelayMs: 100, maxDelayMs: 200, budgetMs: 240_000 });
    expect(out).toMatchObject({ status: 'failed', failure: { type: 'overloaded' } });
    expect(h().llm.requests({ model })).toHaveLength(2);
  });

  it('reports the compaction settings: the flags given, the window from AGENT_MODELS_FILE for a model it knows, none for a model nobody knows', async () => {
    const flagged = await runJson(['--prompt', 'hi', '--model', `anthropic:echo-${newModel('compact')}`, '--context-window', '5000', '--compact-at', '0.5', '--clear-tool-results-after', '3']);
    expect(flagged.settings).toMatchObject({ contextWindow: 5_000, compactAt: 0.5, clearToolResultsAfter: 3 });

    const known = `echo-${newModel('known-window')}`;
    const modelsFile = path.join(workspace(), 'models.json');
    await writeFile(modelsFile, JSON.stringify({ [`openai:${known}`]: { contextWindow: 12_000, maxOutputTokens: 2_000 } }));
    const fromFile = await runJson(['--prompt', 'hi', '--model', `openai:${known}`, '--keep'], { AGENT_MODELS_FILE: modelsFile });
    expect(fromFile.settings).toMatchObject({ contextWindow: 12_000, compactAt: 0.75 });
    expect(await handle(fromFile.workflowId).query(stateQuery)).toMatchObject({ contextWindow: 12_000, compactAt: 0.75 });
    await handle(fromFile.workflowId).terminate('test cleanup');

    const unknown = await runJson(['--prompt', 'hi', '--model', `openai:echo-${newModel('unknown-window')}`, '--keep'], { AGENT_MODELS_FILE: modelsFile });
    expect(unknown.settings).toMatchObject({ compactAt: 0.75 });
    expect(unknown.settings).not.toHaveProperty('contextWindow');
    expect(unknown.settings).not.toHaveProperty('clearToolResultsAfter');
    expect((await handle(unknown.workflowId).query(stateQuery)).contextWindow).toBeNull();
    await handle(unknown.workflowId).terminate('test cleanup');
  });

  it('start takes the same flags: the session runs with them', async () => {
    const result = await cli(['start', '--model', `anthropic:echo-${newModel('start')}`, '--max-steps', '12', '--tools', 'write_file', '--json']);
    expect(result.code, result.stderr).toBe(0);
    const { workflowId } = JSON.parse(result.stdout);
    expect((await handle(workflowId).query(stateQuery)).settings).toMatchObject({ maxSteps: 12, tools: ['write_file'] });
    await handle(workflowId).terminate('test cleanup');
  });

  it('--fallback, --fallback-after, --fallback-return-after and --priority reach the started session\'s input, for start as docs/fallback.md runs it and for run', async () => {
    const lines = new DocLines(await blocksRunBy('test/client-settings.test.ts'));
    const { argv } = lines.take(/ start .*--fallback /);
    expect(lines.untaken()).toEqual([]);
    expect(argv.slice(0, 4)).toEqual(['npm', 'run', 'client', '--']);
    const started = await cli(argv.slice(4));
    expect(started.code, started.stderr).toBe(0);
    const { workflowId } = JSON.parse(started.stdout);
    const documented = { fallbacks: ['openai:gpt-5', 'google:gemini-2.5-pro'], fallbackAfterMs: 20_000, fallbackReturnAfterMs: 600_000 };
    expect((await handle(workflowId).query(stateQuery)).settings).toMatchObject(documented);
    await handle(workflowId).terminate('test cleanup');

    const flags = ['--fallback', 'google:gemini-2.5-pro', '--fallback-after', '1m', '--fallback-return-after', '2h', '--priority', 'batch'];
    const expected = { fallbacks: ['google:gemini-2.5-pro'], fallbackAfterMs: 60_000, fallbackReturnAfterMs: 7_200_000, priority: 'batch' };
    const ran = await runJson(['--prompt', 'hi', '--model', `anthropic:echo-${newModel('fallback-run')}`, ...flags, '--keep']);
    expect(ran.settings).toMatchObject(expected);
    expect((await handle(ran.workflowId).query(stateQuery)).settings).toMatchObject(expected);
    await handle(ran.workflowId).terminate('test cleanup');
  });

  it('--fallback-after 1s: a step whose provider is down goes to the next model after 1 s of 529s, and the next session on that worker after its first 529', async () => {
    const down = newModel('down');
    const up = newModel('up');
    h().llm.script(down, ...Array.from({ length: 3 }, () => ({ kind: 'status', status: 529 }) as const));
    h().llm.script(up, { kind: 'text', text: 'answered by the fallback' }, { kind: 'text', text: 'answered by the fallback again' });
    const flags = ['--model', `anthropic:${down}`, '--fallback', `openai:${up}`, '--fallback-after', '1s'];
    const first = await runJson(['--prompt', 'hi', ...flags]);
    expect(first).toMatchObject({ status: 'completed', reason: 'answered' });
    expect(first.messages.at(-1)).toMatchObject({ role: 'assistant', text: 'answered by the fallback' });
    // Retry 1 waits 0.5 to 1 s, ending within the second; retry 2 would end past it.
    expect(h().llm.requests({ model: down })).toHaveLength(2);
    const second = await runJson(['--prompt', 'hi', ...flags]);
    expect(second.messages.at(-1)).toMatchObject({ role: 'assistant', text: 'answered by the fallback again' });
    // The worker has seen the model failing for longer than 1 s: the new call moves on after its first 529.
    expect(h().llm.requests({ model: down })).toHaveLength(3);
  });
});

/**
 * An HTTP server on 127.0.0.1 that takes requests and never answers them, so a GET to it
 * lasts until its time limit. Listed by its IP literal: the allowlist reaches loopback only so.
 */
function useSlowTarget() {
  const held = new Set<ServerResponse>();
  let count = 0;
  const server = createServer((_request, response) => {
    count++;
    held.add(response);
  });
  let port = 0;
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    for (const response of held) response.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return {
    get host() {
      return `127.0.0.1:${port}`;
    },
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    requests: () => count,
  };
}
