import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROVIDER_STREAMS } from '../activities/llm/providers';
import { anthropicRequestBody } from '../activities/llm/providers/anthropic';
import type { AssistantMessage, LlmRequest, Message } from '../contracts/messages';
import type { ProviderId } from '../contracts/model-ref';
import { toolSpecs } from '../contracts/tools/registry';
import { demoReply } from '../testing/scripted-llm/demo-model';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { clientEnvOf, useAgentHarness } from './support/agent-harness';
import { runEntry } from './support/cli';
import { runInProcess } from './support/cli-in-process';
import { useTempDir } from './support/temp-dir';

/**
 * The scripted LLM's offline demo model (testing/scripted-llm/demo-model.ts): with no key
 * and nothing scripted, a new user's own prompt gets an answer on every wire format, and
 * the README's tour runs as written.
 */

let llm: ScriptedLlm;
const dispatcher = new Agent();
beforeAll(async () => {
  // The default options, as `npm start` and `npm run llm` run it.
  llm = await startScriptedLlm();
});
afterAll(async () => {
  await llm.close();
  await dispatcher.close();
});

/** The model names of the README's examples: nothing is scripted for them. */
const MODELS: Record<ProviderId, string> = { anthropic: 'claude-sonnet-4-5', openai: 'gpt-4.1', google: 'gemini-2.5-flash' };
const PROVIDERS = Object.keys(MODELS) as ProviderId[];

const user = (text: string): Message => ({ role: 'user', text });
/** The reply as the session sends it back in the next request. */
function sent(reply: AssistantMessage): Message {
  const { usage: _usage, stopReason: _stopReason, costUsd: _costUsd, responseModel: _responseModel, ...message } = reply;
  return message;
}
const resultOf = (reply: AssistantMessage, content: string): Message => {
  const call = reply.toolCalls[0]!;
  return { role: 'tool', toolCallId: call.id, name: call.name, code: 'ok', content };
};

describe.each(PROVIDERS)('the demo model on %s, through the real adapter', (provider) => {
  const baseUrl = () => (provider === 'openai' ? `${llm.url}/v1` : llm.url);
  const ask = (messages: Message[], over: Partial<LlmRequest> = {}) =>
    PROVIDER_STREAMS[provider](
      { model: MODELS[provider], messages, tools: toolSpecs(), maxTokens: 256, ...over },
      { dispatcher, baseUrl: baseUrl(), apiKey: 'no-key-needed', signal: new AbortController().signal, idleTimeoutMs: 5_000 },
    );

  it('works arithmetic out with the calculator: calls it first, then answers with its result', async () => {
    const prompt = user('What is 6*7?');
    const call = await ask([prompt]);
    expect(call.toolCalls).toEqual([{ id: expect.any(String), name: 'calculator', input: { expression: '6*7' } }]);
    expect(call.stopReason).toBe('tool_use');

    const answer = await ask([prompt, sent(call), resultOf(call, '42')]);
    expect(answer.toolCalls).toEqual([]);
    expect(answer.text).toBe('6*7 = 42.');
    expect(answer.stopReason).toBe('end_turn');
  });

  it('reads a file with read_file, then says what it returned', async () => {
    const prompt = user('Read notes.txt');
    const call = await ask([prompt]);
    expect(call.toolCalls).toEqual([{ id: expect.any(String), name: 'read_file', input: { path: 'notes.txt' } }]);

    const answer = await ask([prompt, sent(call), resultOf(call, 'buy milk')]);
    expect(answer.toolCalls).toEqual([]);
    expect(answer.text).toContain('buy milk');
  });

  it('writes a file with write_file, then says what the tool answered', async () => {
    const prompt = user("Write 'hello' to notes.txt");
    const call = await ask([prompt]);
    expect(call.toolCalls).toEqual([{ id: expect.any(String), name: 'write_file', input: { path: 'notes.txt', content: 'hello' } }]);

    const answer = await ask([prompt, sent(call), resultOf(call, 'Wrote 5 bytes to notes.txt.')]);
    expect(answer.toolCalls).toEqual([]);
    expect(answer.text).toContain('Wrote 5 bytes to notes.txt.');
  });

  it('answers anything else honestly: it is the offline demo model, and how to use a real provider', async () => {
    const answer = await ask([user('Tell me a joke about ducks.')]);
    expect(answer.toolCalls).toEqual([]);
    expect(answer.text).toContain('offline demo model');
    expect(answer.text).toMatch(/ANTHROPIC_API_KEY.*OPENAI_API_KEY.*GEMINI_API_KEY.*AGENT_MODEL/);
  });

  it('does not call a tool the request does not offer, and says so', async () => {
    const answer = await ask([user('What is 6*7?')], { tools: [] });
    expect(answer.toolCalls).toEqual([]);
    expect(answer.text).toContain('calculator tool for that, but this session does not offer it');
  });

  it('gives the same request the same reply, call id included, so a retried step sees what the first saw', async () => {
    const first = await ask([user('What is (2+3)*4?')]);
    const again = await ask([user('What is (2+3)*4?')]);
    // Gemini sends no call ids: the adapter makes its own, so only the call itself can repeat.
    const comparable = (m: AssistantMessage) => (provider === 'google' ? { ...m, toolCalls: m.toolCalls.map(({ id: _id, ...call }) => call) } : m);
    expect(comparable(again)).toEqual(comparable(first));
    expect(first.toolCalls[0]?.input).toEqual({ expression: '(2+3)*4' });
  });

  it('lets a scripted reply win: the demo model answers only once the script has run out', async () => {
    const model = `demo-scripted-${provider}`;
    llm.script(model, { kind: 'text', text: 'scripted first' });
    expect((await ask([user('What is 6*7?')], { model })).text).toBe('scripted first');
    expect((await ask([user('What is 6*7?')], { model })).toolCalls).toMatchObject([{ name: 'calculator' }]);
  });
});

describe('what the demo model makes of a prompt', () => {
  const reply = (prompt: string) => demoReply('anthropic', anthropicRequestBody({ model: 'm', messages: [user(prompt)], tools: toolSpecs(), maxTokens: 256 }));

  it.each([
    ['What is (17 + 25) * 2? Use the calculator.', '(17 + 25) * 2'],
    ['(2+3)*4', '(2+3)*4'],
    ['what is 7 × 6', '7 * 6'],
    ['Compute -3 + 10 / 4 please', '-3 + 10 / 4'],
  ])('takes the arithmetic out of %j for the calculator', (prompt, expression) => {
    expect(reply(prompt)).toMatchObject({ kind: 'tool_calls', calls: [{ name: 'calculator', input: { expression } }] });
  });

  it.each([
    ["What's in notes/todo.md?", 'notes/todo.md'],
    ['show me the contents of the file "a.txt".', 'a.txt'],
  ])('reads the file %j names', (prompt, path) => {
    expect(reply(prompt)).toMatchObject({ kind: 'tool_calls', calls: [{ name: 'read_file', input: { path } }] });
  });

  it.each([
    ['Write "2+2" to sums.txt', { path: 'sums.txt', content: '2+2' }],
    ["save 'it's done' into the file log.txt", { path: 'log.txt', content: "it's done" }],
    ['write hello world to out/a.txt', { path: 'out/a.txt', content: 'hello world' }],
  ])('writes what %j asks for', (prompt, input) => {
    expect(reply(prompt)).toMatchObject({ kind: 'tool_calls', calls: [{ name: 'write_file', input }] });
  });

  it.each(['read me a story', 'I have 2 cats and 3 dogs', ''])('answers %j with the honest text, no tool', (prompt) => {
    expect(reply(prompt)).toMatchObject({ kind: 'text', text: expect.stringContaining('offline demo model') });
  });

  it.each([
    ['50 000 opening parentheses', '('.repeat(50_000)],
    ['"1 + " 20 000 times', '1 + '.repeat(20_000)],
    ['"write" and "a to" 20 000 times', `write ${'a to '.repeat(20_000)}`],
    ['"write" and 50 000 spaces', `write${' '.repeat(50_000)}`],
    ['"write a", 50 000 spaces and "x"', `write a${' '.repeat(50_000)}x`],
  ])('answers a long prompt at once: %s in well under a second, not after a regular expression backtracks for minutes', (_label, prompt) => {
    const started = performance.now();
    reply(prompt);
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});

describe("the README's tour, with no key and nothing scripted, on a real worker", () => {
  const workspace = useTempDir('demo-model-workspace-');
  const h = useAgentHarness(() => ({ env: { AGENT_WORKSPACE: workspace() } }));
  /** The CLI's process, as a user starts it: for the first command line here, so the process around it stays proven. */
  const cliProcess = (...args: string[]) => runEntry('client/main.ts', args, clientEnvOf(h()));
  /** The same command line in this process (client/command-line.ts, as the CLI runs it): the rest, without a process start each. */
  const cli = (...args: string[]) => runInProcess(args, clientEnvOf(h()));
  const sessionId = (stdout: string) => /\/workflows\/(session-[^/\s]+)\//.exec(stdout)?.[1] ?? '';

  it('npm run client -- run --prompt "What is 6*7?" --model anthropic:claude-sonnet-4-5 completes with 42, through the calculator', async () => {
    const result = await cliProcess('run', '--prompt', 'What is 6*7?', '--model', 'anthropic:claude-sonnet-4-5');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('turn completed');
    expect(result.stdout).toContain('6*7 = 42.');
    const log = await cli('log', sessionId(result.stdout));
    expect(log.code, log.stderr).toBe(0);
    expect(log.stdout).toContain('→ calculator {"expression":"6*7"}');
    expect(log.stdout).toContain('✓ calculator: 42');
    expect(h().llm.requests({ model: 'claude-sonnet-4-5' }).map((r) => r.replyKind)).toEqual(['tool_calls', 'text']);
  }, 60_000);

  it('npm run client -- run --prompt "Write \'hello\' to notes.txt" --model openai:gpt-4.1 writes the file in the workspace', async () => {
    const result = await cli('run', '--prompt', "Write 'hello' to notes.txt", '--model', 'openai:gpt-4.1');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('turn completed');
    expect(result.stdout).toContain('Wrote 5 bytes to notes.txt.');
    expect(await readFile(path.join(workspace(), 'notes.txt'), 'utf8')).toBe('hello');
  }, 60_000);

  it('start --model google:gemini-2.5-flash, then send <id> "What is (2+3)*4?" --wait answers 20, and log <id> shows the calculator call', async () => {
    const started = await cli('start', '--model', 'google:gemini-2.5-flash');
    expect(started.code, started.stderr).toBe(0);
    const id = /^session (session-\S+)$/m.exec(started.stdout)?.[1] ?? '';
    const sent = await cli('send', id, 'What is (2+3)*4?', '--wait');
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout).toContain('(2+3)*4 = 20.');
    const log = await cli('log', id);
    expect(log.code, log.stderr).toBe(0);
    expect(log.stdout).toContain('→ calculator {"expression":"(2+3)*4"}');
    expect(log.stdout).toContain('✓ calculator: 20');
    expect(log.stdout).toContain('(2+3)*4 = 20.');
    await h().client.workflow.getHandle(id).terminate('test cleanup');
  }, 60_000);
});
