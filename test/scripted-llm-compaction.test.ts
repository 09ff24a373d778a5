/**
 * The scripted LLM's side of context compaction: it answers the agent's compaction
 * requests with a summary, refuses a request above a model's configured window as the
 * real provider would, and plays a context overflow on demand. Requests are sent by the
 * agent's own provider adapters, so what is checked is what the agent sends and how it
 * classifies the answer.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPACTION_INSTRUCTION, compactionMessages } from '../activities/llm/compaction-request';
import { LlmError } from '../activities/llm/llm-error';
import { PROVIDER_STREAMS } from '../activities/llm/providers';
import { requestTokens } from '../testing/scripted-llm/context-window';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import type { AssistantMessage, Message } from '../contracts/messages';
import type { ProviderId } from '../contracts/model-ref';

let llm: ScriptedLlm;
const dispatcher = new Agent();
let counter = 0;
/** A fresh model name per test, so no test can pop another's reply. */
const modelName = (prefix: string) => `${prefix}-${++counter}`;

beforeAll(async () => {
  llm = await startScriptedLlm();
});
afterAll(async () => {
  await llm.close();
  await dispatcher.close();
});

const PROVIDERS: ProviderId[] = ['anthropic', 'openai', 'google'];

/** One finished turn with a tool call: what a compaction summarises. */
const CONVERSATION: Message[] = [
  { role: 'user', text: 'What is in notes.txt?' },
  { role: 'assistant', text: '', toolCalls: [{ id: 'toolu_1', name: 'read_file', input: { path: 'notes.txt' } }] },
  { role: 'tool', toolCallId: 'toolu_1', name: 'read_file', code: 'ok', content: 'buy milk' },
  { role: 'assistant', text: 'It says: buy milk.', toolCalls: [] },
];

const TOOLS = [{ name: 'read_file', description: 'Reads a file.', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } }];

/** A request through the agent's adapter for `provider`, as the LLM activity sends it. */
function call(provider: ProviderId, model: string, messages: Message[], baseUrl = llm.url): Promise<AssistantMessage> {
  return PROVIDER_STREAMS[provider](
    { model, system: 'You are terse.', messages, tools: TOOLS, maxTokens: 256 },
    { dispatcher, baseUrl, apiKey: 'scripted-key', signal: new AbortController().signal, idleTimeoutMs: 5_000 },
  );
}

async function failureOf(promise: Promise<unknown>): Promise<LlmError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!LlmError.is(error)) throw new Error(`expected an LlmError, got ${String(error)}`);
  return error;
}

const lastRequest = (model: string) => llm.requests({ model }).at(-1);

/** Each provider's way of forbidding tool calls for one request. */
const NO_TOOL_CALLS: Record<ProviderId, unknown> = {
  anthropic: { type: 'none' },
  openai: 'none',
  google: { functionCallingConfig: { mode: 'NONE' } },
};

/** The field of a request body that says whether the model may call tools (Gemini: `toolConfig`). */
function toolChoiceOf(provider: ProviderId, body: unknown): unknown {
  const fields = body as Record<string, unknown>;
  return provider === 'google' ? fields.toolConfig : fields.tool_choice;
}

describe('compaction requests', () => {
  it.each(PROVIDERS)('%s: answers one with a default summary naming how many messages it summarised, and keeps the step replies for the steps', async (provider) => {
    const model = modelName(`compact-default-${provider}`);
    llm.script(model, { kind: 'text', text: 'the next step' });

    const summary = await call(provider, model, compactionMessages(CONVERSATION));

    expect(summary.text).toMatch(/^Summary by the scripted LLM of the \d+ messages before the compaction request\.$/);
    expect(lastRequest(model)).toMatchObject({ purpose: 'compact', replyKind: 'summary', outcome: 'completed' });
    expect(llm.pending(model)).toBe(1);
    expect((await call(provider, model, [...CONVERSATION, { role: 'user', text: 'And then?' }])).text).toBe('the next step');
    expect(lastRequest(model)).toMatchObject({ purpose: 'step', replyKind: 'text' });
  });

  it('counts the messages of the request before its instruction in the default summary', async () => {
    const model = modelName('compact-count');
    const summary = await call('anthropic', model, compactionMessages(CONVERSATION));
    // Anthropic merges the tool result into a user turn: user, assistant, user (result), assistant, user (instruction).
    expect(summary.text).toContain('of the 4 messages before');
  });

  it('answers from the replies scripted for compactions, in order, then falls back to the default summary', async () => {
    const model = modelName('compact-scripted');
    llm.scriptCompaction(model, { kind: 'text', text: 'Read notes.txt: buy milk.' }, { kind: 'status', status: 529 });
    expect(llm.pendingCompactions(model)).toBe(2);

    expect((await call('openai', model, compactionMessages(CONVERSATION))).text).toBe('Read notes.txt: buy milk.');
    expect((await failureOf(call('openai', model, compactionMessages(CONVERSATION)))).type).toBe('overloaded');
    expect((await call('openai', model, compactionMessages(CONVERSATION))).text).toMatch(/^Summary by the scripted LLM/);
    expect(llm.requests({ model, purpose: 'compact' }).map((r) => r.replyKind)).toEqual(['text', 'status', 'summary']);
  });

  it('recognises the instruction when the provider merges it into a user turn after other text (a turn that ended without an answer)', async () => {
    const model = modelName('compact-merged');
    const unanswered: Message[] = [...CONVERSATION, { role: 'user', text: 'This turn failed before any answer.' }];

    await call('anthropic', model, compactionMessages(unanswered));
    await call('google', model, compactionMessages(unanswered));

    const [anthropic, google] = llm.requests({ model });
    expect((anthropic?.body as { messages: { content: unknown[] }[] }).messages.at(-1)?.content).toHaveLength(2);
    expect((google?.body as { contents: { parts: unknown[] }[] }).contents.at(-1)?.parts).toHaveLength(2);
    expect([anthropic?.purpose, google?.purpose]).toEqual(['compact', 'compact']);
  });

  it.each(PROVIDERS)('%s: forbids tool calls in the provider’s own field for a compaction request, and leaves a step free to call them', async (provider) => {
    const model = modelName(`compact-no-tools-${provider}`);
    llm.script(model, { kind: 'text', text: 'a step' });

    await call(provider, model, compactionMessages(CONVERSATION));
    await call(provider, model, [...CONVERSATION, { role: 'user', text: 'And then?' }]);

    const [compaction, step] = llm.requests({ model }).map((r) => toolChoiceOf(provider, r.body));
    expect(compaction).toEqual(NO_TOOL_CALLS[provider]);
    expect(step).toBeUndefined();
  });

  it.each(PROVIDERS)('%s: names no tool choice in a compaction request without tools, which OpenAI would refuse', async (provider) => {
    const model = modelName(`compact-toolless-${provider}`);
    const summary = await PROVIDER_STREAMS[provider](
      { model, messages: compactionMessages([{ role: 'user', text: 'hello' }]), tools: [], maxTokens: 256 },
      { dispatcher, baseUrl: llm.url, apiKey: 'scripted-key', signal: new AbortController().signal, idleTimeoutMs: 5_000 },
    );
    expect(summary.text).toMatch(/^Summary by the scripted LLM/);
    expect(toolChoiceOf(provider, lastRequest(model)?.body)).toBeUndefined();
  });

  it('refuses, as OpenAI does, a tool choice in a request without tools', async () => {
    const res = await request(`${llm.url}/chat/completions`, {
      method: 'POST',
      dispatcher,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: modelName('tool-choice-alone'), stream: true, tool_choice: 'none', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.statusCode).toBe(400);
    expect(await res.body.json()).toMatchObject({ error: { message: "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified." } });
  });

  it.each(PROVIDERS)('%s: answers a request that forbids tool calls with text only, a scripted call written out as text, as a model told to call none answers', async (provider) => {
    const model = modelName(`compact-call-as-text-${provider}`);
    llm.scriptCompaction(
      model,
      { kind: 'tool_calls', calls: [{ name: 'read_file', input: { path: 'notes.txt' } }] },
      { kind: 'tool_calls', text: 'The notes say: buy milk.', calls: [{ name: 'read_file', input: { path: 'notes.txt' } }] },
    );

    const written = await call(provider, model, compactionMessages(CONVERSATION));
    const withText = await call(provider, model, compactionMessages(CONVERSATION));

    expect(written).toMatchObject({ text: 'read_file {"path":"notes.txt"}', toolCalls: [], stopReason: 'end_turn' });
    expect(withText).toMatchObject({ text: 'The notes say: buy milk.', toolCalls: [], stopReason: 'end_turn' });
  });

  it('takes a request whose user text only mentions the instruction further on for a step', async () => {
    const model = modelName('compact-not');
    llm.script(model, { kind: 'text', text: 'a step' });
    await call('anthropic', model, [{ role: 'user', text: `Please read this: ${COMPACTION_INSTRUCTION}` }]);
    expect(lastRequest(model)).toMatchObject({ purpose: 'step', replyKind: 'text' });
  });
});

describe('a configured context window', () => {
  it.each(PROVIDERS)('%s: refuses a larger request with the provider’s context-overflow error, which the agent classifies as context_overflow', async (provider) => {
    const model = modelName(`window-${provider}`);
    llm.script(model, { kind: 'text', text: 'fits' });
    const big: Message[] = [{ role: 'user', text: 'x'.repeat(4_000) }];
    llm.setContextWindow(model, 600);

    const error = await failureOf(call(provider, model, big));

    expect(error).toMatchObject({ type: 'context_overflow', status: 400, retryable: false });
    const refused = lastRequest(model);
    expect(refused).toMatchObject({ replyKind: 'over_window', purpose: 'step', outcome: 'completed' });
    expect(refused?.tokens).toBe(requestTokens(refused?.body));
    expect(refused?.tokens).toBeGreaterThan(600);
    expect(error.message).toContain(String(refused?.tokens));
    expect(error.message).toContain('600');
    // The refusal played no scripted reply: the request that fits gets it.
    expect(llm.pending(model)).toBe(1);
    expect((await call(provider, model, [{ role: 'user', text: 'short' }])).text).toBe('fits');
    expect(llm.requests({ model, replyKind: 'over_window' })).toHaveLength(1);
  });

  it('refuses in each provider’s own wire format', async () => {
    const model = modelName('window-wire');
    llm.setContextWindow(model, 10);
    const text = 'y'.repeat(200);
    const post = async (path: string, body: unknown) => {
      const res = await request(`${llm.url}${path}`, { method: 'POST', dispatcher, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.statusCode, body: await res.body.json() };
    };

    const anthropic = await post('/v1/messages', { model, max_tokens: 10, stream: true, messages: [{ role: 'user', content: text }] });
    const openai = await post('/chat/completions', { model, stream: true, messages: [{ role: 'user', content: text }] });
    const google = await post(`/v1beta/models/${model}:streamGenerateContent?alt=sse`, { contents: [{ role: 'user', parts: [{ text }] }] });

    const [a, o, g] = llm.requests({ model }).map((r) => r.tokens);
    expect(anthropic).toEqual({
      status: 400,
      body: { type: 'error', error: { type: 'invalid_request_error', message: `prompt is too long: ${a} tokens > 10 maximum` }, request_id: expect.any(String) },
    });
    expect(openai).toEqual({
      status: 400,
      body: {
        error: {
          message: `This model's maximum context length is 10 tokens. However, your messages resulted in ${o} tokens. Please reduce the length of the messages.`,
          type: 'invalid_request_error',
          param: null,
          code: 'context_length_exceeded',
        },
      },
    });
    expect(google).toEqual({
      status: 400,
      body: { error: { code: 400, message: `The input token count (${g}) exceeds the maximum number of tokens allowed (10).`, status: 'INVALID_ARGUMENT' } },
    });
  });

  it('counts a request as its JSON characters / 4, and reports that as the answer’s input tokens', async () => {
    const model = modelName('window-usage');
    llm.script(model, { kind: 'text', text: 'counted' });
    const answer = await call('openai', model, CONVERSATION);
    const recorded = lastRequest(model);
    expect(recorded?.tokens).toBe(Math.ceil(JSON.stringify(recorded?.body).length / 4));
    expect(answer.usage.inputTokens).toBe(recorded?.tokens);
  });

  it('applies to compaction requests too', async () => {
    const model = modelName('window-compact');
    llm.setContextWindow(model, 20);
    expect((await failureOf(call('anthropic', model, compactionMessages(CONVERSATION)))).type).toBe('context_overflow');
    expect(lastRequest(model)).toMatchObject({ purpose: 'compact', replyKind: 'over_window' });
  });

  it('is the server’s default for every model without its own, and a model’s own replaces it until removed', async () => {
    const server = await startScriptedLlm({ contextWindow: 30 });
    try {
      const model = modelName('window-default');
      server.script(model, { kind: 'text', text: 'roomy' });
      expect((await failureOf(call('anthropic', model, CONVERSATION, server.url))).type).toBe('context_overflow');
      server.setContextWindow(model, 100_000);
      expect((await call('anthropic', model, CONVERSATION, server.url)).text).toBe('roomy');
      server.setContextWindow(model, null);
      expect(server.contextWindow(model)).toBe(30);
    } finally {
      await server.close();
    }
  });

  it('refuses a window that is not a positive whole number of tokens, naming the model', async () => {
    expect(() => llm.setContextWindow('window-bad', 0)).toThrow('scripted LLM: the context window for model "window-bad" must be a positive whole number of tokens, got 0');
    expect(() => llm.setContextWindow('window-bad', 1.5)).toThrow(/got 1.5/);
    await expect(startScriptedLlm({ contextWindow: -1 })).rejects.toThrow('scripted LLM: contextWindow must be a positive whole number of tokens, got -1');
  });
});

describe('a scripted context overflow', () => {
  it.each(PROVIDERS)('%s: answers the next requests with the provider’s context-overflow error, one per scripted reply, whatever their size', async (provider) => {
    const model = modelName(`overflow-${provider}`);
    llm.script(model, { kind: 'context_overflow' }, { kind: 'context_overflow', contextWindow: 1_000 }, { kind: 'text', text: 'recovered' });

    const first = await failureOf(call(provider, model, CONVERSATION));
    const second = await failureOf(call(provider, model, CONVERSATION));

    expect([first.type, second.type]).toEqual(['context_overflow', 'context_overflow']);
    const tokens = lastRequest(model)?.tokens ?? 0;
    expect(first.message).toContain(String(tokens - 1));
    expect(second.message).toContain('1000');
    expect((await call(provider, model, CONVERSATION)).text).toBe('recovered');
    expect(llm.requests({ model }).map((r) => r.replyKind)).toEqual(['context_overflow', 'context_overflow', 'text']);
    expect(llm.requests({ model, replyKind: 'over_window' })).toEqual([]);
  });

  it('can be scripted for a compaction request', async () => {
    const model = modelName('overflow-compact');
    llm.scriptCompaction(model, { kind: 'context_overflow' });
    expect((await failureOf(call('google', model, compactionMessages(CONVERSATION)))).type).toBe('context_overflow');
    expect(lastRequest(model)).toMatchObject({ purpose: 'compact', replyKind: 'context_overflow' });
  });
});

describe('the control API for windows and compactions', () => {
  async function control(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) {
    const res = await request(`${llm.url}${path}`, { method, dispatcher, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
  }

  it('sets and removes a model’s window, queues its compaction replies and lists its oversize requests', async () => {
    const model = modelName('ctl-window');
    expect(await control('POST', `/_scripted/_window?model=${model}&tokens=25`)).toEqual({ status: 200, body: { model, contextWindow: 25 } });
    expect(await control('POST', `/_scripted/_compaction?model=${model}`, [{ kind: 'text', text: 'summary over http' }])).toEqual({ status: 200, body: { model, pending: 1 } });
    expect((await control('GET', `/_scripted/${model}`)).body).toEqual({ model, pending: 0, pendingCompactions: 1, held: 0, contextWindow: 25 });

    await failureOf(call('anthropic', model, CONVERSATION));
    const oversize = await control('GET', `/_scripted/requests?model=${model}&replyKind=over_window&purpose=step`);
    expect(oversize.body).toHaveLength(1);

    expect(await control('DELETE', `/_scripted/_window?model=${model}`)).toEqual({ status: 200, body: { model, contextWindow: null } });
    expect((await call('anthropic', model, compactionMessages(CONVERSATION))).text).toBe('summary over http');
    expect((await control('GET', `/_scripted/requests?model=${model}&purpose=compact`)).body).toHaveLength(1);
  });

  it('refuses a window that is not a number of tokens and a purpose it does not know', async () => {
    const bad = await control('POST', '/_scripted/_window?model=ctl-bad&tokens=many');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/context window for model "ctl-bad" must be a positive whole number/);
    expect((await control('GET', '/_scripted/requests?purpose=chat')).status).toBe(400);
  });
});

describe('the command line', () => {
  const start = (args: string[], env: Record<string, string> = {}) =>
    spawn(process.execPath, ['bin/launch.js', 'testing/scripted-llm/main.ts', '--port', '0', ...args], {
      cwd: new URL('..', import.meta.url).pathname,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });

  it('gives every model the window of --context-window, or of SCRIPTED_LLM_CONTEXT_WINDOW', async () => {
    for (const [args, env] of [[['--context-window', '40'], {}], [[], { SCRIPTED_LLM_CONTEXT_WINDOW: '40' }]] as const) {
      const child = start([...args], env);
      try {
        const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
        const url = /listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(line)?.[1] ?? '';
        const res = await request(`${url}/_scripted/any-model`, { method: 'GET', dispatcher });
        expect(await res.body.json()).toMatchObject({ contextWindow: 40 });
        const error = await failureOf(call('anthropic', 'any-model', CONVERSATION, url));
        expect(error.type).toBe('context_overflow');
      } finally {
        child.kill('SIGKILL');
      }
    }
  }, 20_000);

  it('stops with one line naming the flag when the window is not a positive whole number', async () => {
    for (const [args, env, flag] of [
      [['--context-window', 'big'], {}, '--context-window'],
      [[], { SCRIPTED_LLM_CONTEXT_WINDOW: '0' }, 'SCRIPTED_LLM_CONTEXT_WINDOW'],
    ] as const) {
      const child = start([...args], env);
      const exited = once(child, 'exit');
      let stderr = '';
      child.stderr!.on('data', (chunk) => (stderr += chunk));
      expect((await exited)[0]).toBe(1);
      expect(stderr.trim()).toMatch(new RegExp(`^scripted LLM: ${flag}: `));
    }
  }, 20_000);
});
