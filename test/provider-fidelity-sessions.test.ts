import { describe, expect, it } from 'vitest';
import { forkSession, readLog, sendAndWait, startSession } from '../client/sessions';
import type { SessionInput } from '../contracts/api';
import { clientEnvOf, useAgentHarness } from './support/agent-harness';
import { runEntry } from './support/cli';
import { spawnEntry } from './support/spawn-cli';

/**
 * Sessions on a real dev server and worker against the scripted LLM, which refuses what
 * the real APIs refuse: Gemini 3 a function call sent back without its thoughtSignature,
 * Anthropic (with thinking on) a tool turn sent back without its thinking block or with
 * it altered. Each session must get through its second step.
 */

const h = useAgentHarness();

let n = 0;
const unique = (name: string) => `${name}-${++n}-${Date.now()}`;
const start = (input: Partial<SessionInput> & { model: string }) => startSession(h().client, h().env, { idleTimeoutMs: 120_000, ...input });

type Body = Record<string, unknown>;
const bodies = (model: string) => h().llm.requests({ model }).map((r) => r.body as Body);

describe('provider data across steps, end to end', () => {
  it('completes a Gemini 3 tool session in two steps: the call goes back with its thoughtSignature', async () => {
    const model = unique('gemini-3-pro-preview');
    h().llm.script(
      model,
      { kind: 'tool_calls', calls: [{ name: 'calculator', input: { expression: '6*7' } }, { name: 'calculator', input: { expression: '2+2' } }] },
      { kind: 'text', text: '6*7 is 42 and 2+2 is 4.' },
    );
    const session = await start({ model: `google:${model}` });
    const turn = await sendAndWait(session, 'compute both');
    expect(turn).toMatchObject({ status: 'completed' });

    const [first, second] = h().llm.requests({ model });
    expect(second?.replyKind).toBe('text');
    const log = await readLog(session);
    const assistant = log.find((e) => e.type === 'assistant');
    if (assistant?.type !== 'assistant') throw new Error('no assistant message');
    const stored = assistant.message.providerData;
    expect(stored?.provider).toBe('google');
    const signature = stored?.provider === 'google' ? stored.parts[0]?.thoughtSignature : undefined;
    expect(signature).toEqual(expect.any(String));
    // Only the first of the parallel calls is signed, and it goes back exactly as it came.
    const modelTurn = ((second?.body as Body).contents as { role: string; parts: Body[] }[]).find((c) => c.role === 'model');
    expect(modelTurn?.parts).toEqual([
      { functionCall: { name: 'calculator', args: { expression: '6*7' } }, thoughtSignature: signature },
      { functionCall: { name: 'calculator', args: { expression: '2+2' } } },
    ]);
    expect(first?.replyKind).toBe('tool_calls');
    const answer = log.filter((e) => e.type === 'assistant').at(-1);
    expect(answer?.type === 'assistant' && answer.message.text).toBe('6*7 is 42 and 2+2 is 4.');
  });

  it('completes an Anthropic thinking-plus-tools session: the thinking block goes back unchanged, before the tool_use', async () => {
    const model = unique('claude-thinking');
    h().llm.script(
      model,
      { kind: 'tool_calls', thinking: 'The user wants 6*7; the calculator will do.', calls: [{ name: 'calculator', input: { expression: '6*7' } }] },
      { kind: 'text', thinking: 'The tool said 42.', text: 'It is 42.' },
    );
    const session = await start({ model: `anthropic:${model}`, reasoning: 'low', maxTokens: 1_000 });
    expect(await sendAndWait(session, 'what is 6*7?')).toMatchObject({ status: 'completed' });

    const [first, second] = bodies(model);
    expect(first).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2_048 }, max_tokens: 3_048 });
    const assistant = (second?.messages as { role: string; content: Body[] }[]).find((m) => m.role === 'assistant');
    expect(assistant?.content.map((b) => b.type)).toEqual(['thinking', 'tool_use']);
    expect(assistant?.content[0]).toMatchObject({ type: 'thinking', thinking: 'The user wants 6*7; the calculator will do.', signature: expect.any(String) });
    expect(h().llm.requests({ model }).map((r) => r.replyKind)).toEqual(['tool_calls', 'text']);

    // The log keeps the thinking apart from the answer, and counts it for `watch` and `log`.
    const messages = (await readLog(session)).flatMap((e) => (e.type === 'assistant' ? [e.message] : []));
    expect(messages.map((m) => m.text)).toEqual(['', 'It is 42.']);
    expect(messages[1]?.providerData).toMatchObject({ provider: 'anthropic', thinking: [{ type: 'thinking', thinking: 'The tool said 42.' }] });
  });
});

describe('refusals and blocks, end to end', () => {
  const run = (args: string[]) => runEntry('client/main.ts', ['run', ...args], clientEnvOf(h()));

  it.each(['anthropic', 'openai'])('%s: a refusal is a completed turn whose answer has stopReason refusal and the refusal text; run says so', async (provider) => {
    const model = unique(`refuse-${provider}`);
    h().llm.script(model, { kind: 'refusal', text: 'I cannot help with that request.' }, { kind: 'refusal', text: 'I cannot help with that request.' });
    const json = await run(['--prompt', 'something bad', '--model', `${provider}:${model}`, '--json']);
    const out = JSON.parse(json.stdout);
    expect(out).toMatchObject({ status: 'completed', stopReason: 'refusal' });
    expect(out.messages.at(-1)).toEqual({ role: 'assistant', text: 'I cannot help with that request.', toolCalls: [] });

    const human = await run(['--prompt', 'something bad', '--model', `${provider}:${model}`]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('the model refused to answer');
    expect(h().llm.requests({ model })).toHaveLength(2);
  });

  it('google: a blocked prompt fails the turn as content_blocked, naming the reason, and is never retried', async () => {
    const model = unique('gemini-blocked');
    h().llm.script(model, { kind: 'refusal', blockReason: 'PROHIBITED_CONTENT' }, { kind: 'text', text: 'a retry must never get here' });
    const result = await run(['--prompt', 'something bad', '--model', `google:${model}`, '--json']);
    const out = JSON.parse(result.stdout);
    expect(out).toMatchObject({ status: 'failed', failure: { type: 'content_blocked', message: expect.stringContaining('PROHIBITED_CONTENT') } });
    expect(h().llm.requests({ model })).toHaveLength(1);
    expect(h().llm.pending(model)).toBe(1);
  });
});

describe('usage as the providers report it, end to end', () => {
  const run = (args: string[]) => runEntry('client/main.ts', args, clientEnvOf(h()));

  it.each(['anthropic', 'openai', 'google'] as const)('%s: cache read/write and reasoning tokens per step in log, per turn in run --json, in the session result', async (provider) => {
    const model = unique(`usage-${provider}`);
    // Only Anthropic bills cache writes apart; the others report none.
    const write = provider === 'anthropic' ? 30 : 0;
    h().llm.script(
      model,
      { kind: 'tool_calls', calls: [{ name: 'calculator', input: { expression: '6*7' } }], usage: { inputTokens: 1_000, outputTokens: 50, cacheReadTokens: 0, cacheWriteTokens: write, reasoningTokens: 20 } },
      { kind: 'text', text: 'It is 42.', usage: { inputTokens: 1_100, outputTokens: 70, cacheReadTokens: 900, cacheWriteTokens: 0, reasoningTokens: 40 } },
    );
    const result = await run(['run', '--prompt', 'what is 6*7?', '--model', `${provider}:${model}`, '--json', '--keep']);
    const out = JSON.parse(result.stdout);
    const total = { inputTokens: 2_100, outputTokens: 120, cacheReadTokens: 900, cacheWriteTokens: write, reasoningTokens: 60 };
    // The scripted model has no price: its cost is unknown, never 0.
    expect(out.usage).toEqual({ ...total, costUsd: null });

    const log = await run(['log', out.workflowId]);
    expect(log.stdout).toContain(`tokens in 1000${write ? ` (cache write ${write})` : ''} · out 50 (reasoning 20)`);
    expect(log.stdout).toContain('tokens in 1100 (cache read 900) · out 70 (reasoning 40)');

    const session = h().client.workflow.getHandle(out.workflowId);
    await session.executeUpdate('end');
    await expect(session.result()).resolves.toMatchObject({ usage: total });
  });
});

describe('prompt caching, on by default', () => {
  const calculatorThenAnswer = [
    { kind: 'tool_calls' as const, calls: [{ name: 'calculator', input: { expression: '6*7' } }] },
    { kind: 'text' as const, text: 'It is 42.' },
  ];

  it('Anthropic: breakpoints on the last tool, the system prompt and the newest message; step 2 repeats step 1 byte for byte up to its last breakpoint', async () => {
    const model = unique('claude-cache');
    h().llm.script(model, ...calculatorThenAnswer);
    const session = await start({ model: `anthropic:${model}`, system: 'You are terse.' });
    expect(await sendAndWait(session, 'what is 6*7?')).toMatchObject({ status: 'completed' });

    const [step1, step2] = h().llm.requests({ model }).map((r) => r.rawBody ?? '');
    const breakpoint = '"cache_control":{"type":"ephemeral"}';
    for (const raw of [step1!, step2!]) {
      const body = JSON.parse(raw) as { tools: Body[]; system: Body[]; messages: { content: Body[] }[] };
      expect(raw.split(breakpoint)).toHaveLength(4);
      expect(body.tools.at(-1)).toHaveProperty('cache_control');
      expect(body.tools.map((t) => t.name)).toEqual([...body.tools.map((t) => t.name as string)].sort());
      expect(body.system).toEqual([{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }]);
      expect(body.messages.at(-1)?.content.at(-1)).toHaveProperty('cache_control');
    }
    const upToLastBreakpoint = step1!.slice(0, step1!.lastIndexOf(`,${breakpoint}`));
    expect(upToLastBreakpoint.length).toBeGreaterThan(1_000);
    expect(step2!.slice(0, upToLastBreakpoint.length)).toBe(upToLastBreakpoint);
  });

  it('OpenAI: prompt_cache_key is the session id, on every step', async () => {
    const model = unique('gpt-cache');
    h().llm.script(model, ...calculatorThenAnswer);
    const session = await start({ model: `openai:${model}` });
    expect(await sendAndWait(session, 'what is 6*7?')).toMatchObject({ status: 'completed' });
    expect(bodies(model).map((b) => b.prompt_cache_key)).toEqual([session.workflowId, session.workflowId]);
  });

  it.each(['anthropic', 'openai'])('%s: promptCache false sends no breakpoint and no cache key', async (provider) => {
    const model = unique(`nocache-${provider}`);
    h().llm.script(model, { kind: 'text', text: 'ok' });
    const session = await start({ model: `${provider}:${model}`, system: 'You are terse.', promptCache: false });
    expect(await sendAndWait(session, 'hi')).toMatchObject({ status: 'completed' });
    const raw = h().llm.requests({ model })[0]?.rawBody ?? '';
    expect(raw).not.toContain('cache_control');
    expect(raw).not.toContain('prompt_cache_key');
  });
});

describe('run --reasoning and --no-prompt-cache', () => {
  const run = (args: string[]) => runEntry('client/main.ts', ['run', ...args], clientEnvOf(h()));

  it('turns thinking on and caching off for the session, and shows the thinking dimmed in log', async () => {
    const model = unique('claude-flags');
    h().llm.script(model, { kind: 'text', thinking: 'A short greeting will do.', text: 'Hello.' });
    const result = await run(['--prompt', 'hi', '--model', `anthropic:${model}`, '--reasoning', '4096', '--no-prompt-cache', '--json', '--keep']);
    const out = JSON.parse(result.stdout);
    expect(out.status).toBe('completed');
    const [body] = bodies(model);
    expect(body).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 4_096 } });
    expect(h().llm.requests({ model })[0]?.rawBody).not.toContain('cache_control');

    const log = await runEntry('client/main.ts', ['log', out.workflowId], clientEnvOf(h()));
    expect(log.stdout).toMatch(/thinking: A short greeting will do\.\n.*assistant: Hello\./);
  });

  it('refuses a reasoning value it does not know, in one line naming the flag, before any request', async () => {
    const model = unique('claude-bad-flag');
    const result = await run(['--prompt', 'hi', '--model', `anthropic:${model}`, '--reasoning', 'lots']);
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe('client: --reasoning must be off, low, medium, high or a token budget from 1024 to 128000, got "lots"');
    expect(h().llm.requests({ model })).toHaveLength(0);
  });
});

describe('thinking in watch', () => {
  it('shows the thinking live and dimmed while the model thinks, then apart from the answer', async () => {
    const model = unique('claude-watch-thinking');
    // A pause after the thinking arrives, long enough for a heartbeat to carry it to `watch`.
    h().llm.script(model, { kind: 'text', thinking: 'Weighing the options carefully.', text: 'Option B.', stall: { ms: 5_000 } });
    const session = await start({ model: `anthropic:${model}`, reasoning: 'low' });
    const watch = spawnEntry('client/main.ts', ['watch', session.workflowId, '--until-idle'], clientEnvOf(h()));
    try {
      const turn = sendAndWait(session, 'A or B?');
      await watch.waitFor(/llm anthropic:\S+ · thinking \(31 chars\) …Weighing the options carefully\./, 30_000);
      expect(await turn).toMatchObject({ status: 'completed' });
      expect(await watch.exited).toBe(0);
    } finally {
      watch.kill();
    }
    expect(watch.stdout()).toMatch(/turn 1 · step 1 · thinking: Weighing the options carefully\.\n.*turn 1 · step 1 · assistant: Option B\./);
    expect(watch.stderr()).not.toMatch(/streaming \(\d+ chars\) ….*Weighing/);
    await session.terminate('test cleanup');
  });
});

describe('provider data on a fork', () => {
  it('goes back to the same provider on another model, and is dropped for another provider', async () => {
    const model = unique('claude-fork-source');
    h().llm.script(model, { kind: 'tool_calls', thinking: 'Check with the calculator.', calls: [{ name: 'calculator', input: { expression: '6*7' } }] }, { kind: 'text', text: '42.' });
    const source = await start({ model: `anthropic:${model}`, reasoning: 'low', maxTokens: 1_000 });
    expect(await sendAndWait(source, 'what is 6*7?')).toMatchObject({ status: 'completed' });
    const signature = (bodies(model)[1]?.messages as { content: Body[] }[])[1]?.content[0]?.signature;
    expect(signature).toEqual(expect.any(String));

    const sameProvider = unique('claude-fork-target');
    h().llm.script(sameProvider, { kind: 'text', text: 'Still 42.' });
    const sameFork = await forkSession(h().client, h().env, source.workflowId, { model: `anthropic:${sameProvider}` });
    expect(await sendAndWait(sameFork, 'sure?')).toMatchObject({ status: 'completed' });
    const kept = (bodies(sameProvider)[0]?.messages as { role: string; content: Body[] }[]).find((m) => m.role === 'assistant');
    expect(kept?.content[0]).toMatchObject({ type: 'thinking', thinking: 'Check with the calculator.', signature });

    const otherProvider = unique('gpt-fork-target');
    h().llm.script(otherProvider, { kind: 'text', text: 'Yes, 42.' });
    const otherFork = await forkSession(h().client, h().env, source.workflowId, { model: `openai:${otherProvider}` });
    expect(await sendAndWait(otherFork, 'sure?')).toMatchObject({ status: 'completed' });
    const raw = h().llm.requests({ model: otherProvider })[0]?.rawBody ?? '';
    expect(raw).toContain('"tool_calls"');
    expect(raw).not.toContain('Check with the calculator.');
    expect(raw).not.toContain(String(signature));
  });
});
