import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { isAbortError } from '../activities/llm/abort-error';
import { LlmError } from '../activities/llm/llm-error';
import { PROVIDER_STREAMS, type ProviderCall, type StreamProgress } from '../activities/llm/providers';
import type { LlmRequest } from '../contracts/messages';
import type { ProviderId } from '../contracts/model-ref';
import { startScriptedLlm, type ScriptedLlm, type ScriptedReply } from '../testing/scripted-llm/server';

/**
 * The three adapters against the scripted LLM: a real local HTTP server speaking each
 * provider's streaming wire format, so every case below is real bytes on a real socket.
 */

let llm: ScriptedLlm;
const agent = new Agent();
let counter = 0;

beforeAll(async () => {
  llm = await startScriptedLlm();
});
afterAll(async () => {
  await llm.close();
  await agent.close();
});

interface ProviderCase {
  provider: ProviderId;
  /** How this provider's base URL is configured (OpenAI's includes `/v1`, as with its SDK). */
  baseUrl: () => string;
  keyHeader: string;
  keyValue: (key: string) => string;
  /** The failure type of the scripted server's default in-stream error for this provider. */
  defaultStreamErrorType: string;
}

const PROVIDERS: ProviderCase[] = [
  { provider: 'anthropic', baseUrl: () => llm.url, keyHeader: 'x-api-key', keyValue: (k) => k, defaultStreamErrorType: 'overloaded' },
  { provider: 'openai', baseUrl: () => `${llm.url}/v1`, keyHeader: 'authorization', keyValue: (k) => `Bearer ${k}`, defaultStreamErrorType: 'server_error' },
  { provider: 'google', baseUrl: () => llm.url, keyHeader: 'x-goog-api-key', keyValue: (k) => k, defaultStreamErrorType: 'server_error' },
];

const API_KEY = 'sk-test-SECRET-0123456789';

const READ_FILE_TOOL = {
  name: 'read_file',
  description: 'Read a file from the workspace.',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
};

async function failure(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected the call to fail');
}

describe.each(PROVIDERS)('$provider adapter', ({ provider, baseUrl, keyHeader, keyValue, defaultStreamErrorType }) => {
  const stream = PROVIDER_STREAMS[provider];

  /** A fresh model per test, so no test can pop another's reply. */
  function scripted(...replies: ScriptedReply[]): string {
    const model = `${provider}-model-${++counter}`;
    llm.script(model, ...replies);
    return model;
  }

  function request(model: string, over: Partial<LlmRequest> = {}): LlmRequest {
    return { model, system: 'Be brief.', messages: [{ role: 'user', text: 'hello' }], tools: [READ_FILE_TOOL], maxTokens: 256, ...over };
  }

  function call(over: Partial<ProviderCall> = {}): ProviderCall {
    return { dispatcher: agent, baseUrl: baseUrl(), apiKey: API_KEY, signal: new AbortController().signal, idleTimeoutMs: 5_000, ...over };
  }

  it('streams a text reply into one complete assistant message, with the model the stream says answered', async () => {
    const text = 'The quick brown fox jumps over the lazy dog.';
    const model = scripted({ kind: 'text', text, chunkSize: 5, usage: { inputTokens: 11, outputTokens: 7 }, answeredBy: 'answering-snapshot-20250929' });
    expect(await stream(request(model), call())).toEqual({
      role: 'assistant',
      text,
      toolCalls: [],
      stopReason: 'end_turn',
      usage: { inputTokens: 11, outputTokens: 7, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
      responseModel: 'answering-snapshot-20250929',
    });
  });

  it('reports progress as bytes and text arrive', async () => {
    const model = scripted({ kind: 'text', text: 'one two three four five six', chunkSize: 4 });
    const seen: StreamProgress[] = [];
    await stream(request(model), call({ onProgress: (p) => seen.push({ ...p }) }));
    expect(seen.length).toBeGreaterThan(3);
    expect(seen.at(-1)?.text).toBe('one two three four five six');
    const bytes = seen.map((p) => p.bytes);
    expect(bytes).toEqual([...bytes].sort((a, b) => a - b));
    expect(bytes.at(-1)).toBeGreaterThan(0);
  });

  it('reads a max_tokens stop', async () => {
    const model = scripted({ kind: 'text', text: 'cut off', stopReason: 'max_tokens' });
    expect((await stream(request(model), call())).stopReason).toBe('max_tokens');
  });

  it('assembles tool calls whose arguments arrive in pieces', async () => {
    const model = scripted({
      kind: 'tool_calls',
      text: 'Let me look.',
      chunkSize: 4,
      calls: [
        { name: 'read_file', input: { path: 'notes/today.md', maxLines: 40, flags: ['a', 'b'] } },
        { name: 'calculator', input: { expression: '(2+3)*7' } },
      ],
    });
    const progress: StreamProgress[] = [];
    const message = await stream(request(model), call({ onProgress: (p) => progress.push({ ...p }) }));
    expect(message.text).toBe('Let me look.');
    expect(message.stopReason).toBe('tool_use');
    expect(message.toolCalls.map(({ name, input, invalidJson }) => ({ name, input, invalidJson }))).toEqual([
      { name: 'read_file', input: { path: 'notes/today.md', maxLines: 40, flags: ['a', 'b'] }, invalidJson: undefined },
      { name: 'calculator', input: { expression: '(2+3)*7' }, invalidJson: undefined },
    ]);
    const ids = message.toolCalls.map((c) => c.id);
    expect(ids.every((id) => id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(2);
    expect(progress.at(-1)?.toolCalls).toBe(2);
  });

  it('keeps arguments that are not a JSON object as invalidJson, with input {}', async () => {
    const model = scripted({ kind: 'tool_calls', calls: [{ name: 'read_file', rawArguments: '{"path": "a.txt"' }] });
    const [toolCall] = (await stream(request(model), call())).toolCalls;
    expect(toolCall).toMatchObject({ name: 'read_file', input: {}, invalidJson: '{"path": "a.txt"' });
  });

  it('reads a call with no arguments as input {}', async () => {
    const model = scripted({ kind: 'tool_calls', calls: [{ name: 'list_files' }] });
    const [toolCall] = (await stream(request(model), call())).toolCalls;
    expect(toolCall).toMatchObject({ name: 'list_files', input: {} });
    expect(toolCall?.invalidJson).toBeUndefined();
  });

  it('returns an empty but complete reply as a success', async () => {
    const model = scripted({ kind: 'empty' });
    expect(await stream(request(model), call())).toMatchObject({ role: 'assistant', text: '', toolCalls: [], stopReason: 'end_turn' });
  });

  it('fails a stream that ends without its terminal sentinel with a retryable network_error', async () => {
    const model = scripted({ kind: 'truncate', text: 'a partial answer that never' });
    const e = await failure(stream(request(model), call()));
    expect(LlmError.is(e)).toBe(true);
    expect(e).toMatchObject({ type: 'network_error', retryable: true, provider });
    expect((e as Error).message).toMatch(/stream ended before/);
  });

  it('fails a stream truncated before any content the same way', async () => {
    const model = scripted({ kind: 'truncate' });
    expect(await failure(stream(request(model), call()))).toMatchObject({ type: 'network_error', retryable: true });
  });

  it("classifies the provider's default in-stream error as retryable", async () => {
    const model = scripted({ kind: 'stream_error', text: 'Working on' });
    const e = await failure(stream(request(model), call()));
    expect(e).toMatchObject({ type: defaultStreamErrorType, retryable: true, provider });
    expect((e as Error).message).toContain('in-stream');
  });

  it('classifies an in-stream context overflow as not retryable', async () => {
    const shape = {
      anthropic: { errorType: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' },
      openai: { code: 'context_length_exceeded' },
      google: { errorType: 'INVALID_ARGUMENT', message: 'The input token count (2000000) exceeds the maximum number of tokens allowed (1048576).' },
    }[provider];
    const model = scripted({ kind: 'stream_error', ...shape });
    expect(await failure(stream(request(model), call()))).toMatchObject({ type: 'context_overflow', retryable: false });
  });

  it('fails a connection reset mid-stream with a retryable network_error', async () => {
    const model = scripted({ kind: 'reset', text: 'halfway there' });
    expect(await failure(stream(request(model), call()))).toMatchObject({ type: 'network_error', retryable: true });
  });

  it('fails on a data frame that is not JSON with a retryable network_error', async () => {
    const model = scripted({ kind: 'malformed', text: 'some text' });
    const e = await failure(stream(request(model), call()));
    expect(e).toMatchObject({ type: 'network_error', retryable: true });
    expect((e as Error).message).toContain('malformed stream frame');
  });

  it('aborts mid-stream with an abort error, not a network_error, and the server sees the client go away', async () => {
    const model = scripted({ kind: 'text', text: 'a long answer that the user will not wait for', chunkSize: 6, stall: { ms: -1 } });
    const controller = new AbortController();
    const e = await failure(
      stream(
        request(model),
        call({
          signal: controller.signal,
          onProgress: (p) => {
            if (p.text.length > 0) controller.abort(new Error('user cancelled the turn'));
          },
        }),
      ),
    );
    expect(isAbortError(e)).toBe(true);
    expect(LlmError.is(e)).toBe(false);
    await vi.waitFor(() => expect(llm.requests({ model })[0]?.outcome).toBe('aborted-by-client'), { timeout: 5_000 });
  });

  it('keeps a stall filled with pings (idle limit shorter than the stall, longer than the ping interval)', async () => {
    const model = scripted({ kind: 'text', text: 'thought hard, then answered', stall: { ms: 1_200, pingEveryMs: 100 } });
    const message = await stream(request(model), call({ idleTimeoutMs: 400 }));
    expect(message.text).toBe('thought hard, then answered');
  });

  it('cuts a silent stall with a retryable network_error, and closes the connection', async () => {
    const model = scripted({ kind: 'text', text: 'never finished', stall: { ms: 10_000 } });
    const started = Date.now();
    const e = await failure(stream(request(model), call({ idleTimeoutMs: 300 })));
    expect(e).toMatchObject({ type: 'network_error', retryable: true });
    expect((e as Error).message).toContain('no data for 300 ms');
    expect(Date.now() - started).toBeLessThan(5_000);
    await vi.waitFor(() => expect(llm.requests({ model })[0]?.outcome).toBe('aborted-by-client'), { timeout: 5_000 });
  });

  it('surfaces Retry-After on a 429 as retryAfterMs', async () => {
    const model = scripted({ kind: 'status', status: 429, headers: { 'retry-after': '7' } });
    expect(await failure(stream(request(model), call()))).toMatchObject({ type: 'rate_limit', retryable: true, status: 429, retryAfterMs: 7_000 });
  });

  it('fails a 401 as a non-retryable auth_error whose message holds no key', async () => {
    const model = scripted({ kind: 'status', status: 401 });
    const e = await failure(stream(request(model), call()));
    expect(e).toMatchObject({ type: 'auth_error', retryable: false, status: 401 });
    expect((e as Error).message).not.toContain('SECRET');
    expect(JSON.stringify(e)).not.toContain('SECRET');
  });

  it('fails a 503 as a retryable server_error', async () => {
    const model = scripted({ kind: 'status', status: 503 });
    expect(await failure(stream(request(model), call()))).toMatchObject({ type: 'server_error', retryable: true, status: 503 });
  });

  it('sends the key in its header and never in the URL', async () => {
    const model = scripted({ kind: 'text', text: 'ok' });
    await stream(request(model), call());
    const [recorded] = llm.requests({ model });
    expect(recorded?.headers[keyHeader]).toBe(keyValue(API_KEY));
    expect(recorded?.path).not.toContain('key=');
    expect(recorded?.path).not.toContain('SECRET');
  });
});

describe('provider specifics on the wire', () => {
  const call = (baseUrl: string, over: Partial<ProviderCall> = {}): ProviderCall => ({
    dispatcher: agent,
    baseUrl,
    apiKey: 'k',
    signal: new AbortController().signal,
    idleTimeoutMs: 5_000,
    ...over,
  });
  const ask = (model: string): LlmRequest => ({ model, messages: [{ role: 'user', text: 'hi' }], tools: [], maxTokens: 100 });

  it('Anthropic: POST /v1/messages with anthropic-version and the max_tokens field', async () => {
    llm.script('anthropic-wire', { kind: 'text', text: 'ok' });
    await PROVIDER_STREAMS.anthropic(ask('anthropic-wire'), call(llm.url));
    const [r] = llm.requests({ model: 'anthropic-wire' });
    expect(r?.path).toBe('/v1/messages');
    expect(r?.headers['anthropic-version']).toBe('2023-06-01');
    expect(r?.body).toMatchObject({ model: 'anthropic-wire', max_tokens: 100, stream: true });
  });

  it('OpenAI-compatible: sends no Authorization header when no key is set (Ollama), and max_tokens to a non-OpenAI host', async () => {
    llm.script('ollama-wire', { kind: 'text', text: 'ok' });
    await PROVIDER_STREAMS.openai(ask('ollama-wire'), call(`${llm.url}/v1/`, { apiKey: undefined }));
    const [r] = llm.requests({ model: 'ollama-wire' });
    expect(r?.path).toBe('/v1/chat/completions');
    expect(r?.headers.authorization).toBeUndefined();
    expect(r?.body).toMatchObject({ stream: true, stream_options: { include_usage: true }, max_tokens: 100 });
  });

  it('Gemini: the model in the path, alt=sse, and the key only in x-goog-api-key', async () => {
    llm.script('gemini-2.5-flash-wire', { kind: 'text', text: 'ok' });
    await PROVIDER_STREAMS.google(ask('gemini-2.5-flash-wire'), call(llm.url, { apiKey: 'AIzaTESTKEY' }));
    const [r] = llm.requests({ model: 'gemini-2.5-flash-wire' });
    expect(r?.path).toBe('/v1beta/models/gemini-2.5-flash-wire:streamGenerateContent?alt=sse');
    expect(r?.headers['x-goog-api-key']).toBe('AIzaTESTKEY');
    expect(r?.body).toMatchObject({ generationConfig: { maxOutputTokens: 100 } });
  });

  it('Gemini: gives function calls ids that are unique across replies, not just within one', async () => {
    llm.script('gemini-ids', { kind: 'tool_calls', calls: [{ name: 'read_file', input: { path: 'a' } }] }, { kind: 'tool_calls', calls: [{ name: 'read_file', input: { path: 'a' } }] });
    const first = await PROVIDER_STREAMS.google(ask('gemini-ids'), call(llm.url));
    const second = await PROVIDER_STREAMS.google(ask('gemini-ids'), call(llm.url));
    expect(first.toolCalls[0]?.id).toMatch(/^gemini_[0-9a-f]+_1$/);
    expect(first.toolCalls[0]?.id).not.toBe(second.toolCalls[0]?.id);
  });

  it.each(['anthropic', 'openai'] as const)('%s: passes the provider tool-call id through', async (provider) => {
    const model = `${provider}-ids`;
    llm.script(model, { kind: 'tool_calls', calls: [{ id: provider === 'anthropic' ? 'toolu_01ABC' : 'call_ABC', name: 'read_file', input: { path: 'a' } }] });
    const message = await PROVIDER_STREAMS[provider](ask(model), call(provider === 'openai' ? `${llm.url}/v1` : llm.url));
    expect(message.toolCalls[0]?.id).toBe(provider === 'anthropic' ? 'toolu_01ABC' : 'call_ABC');
  });

  it('a refused connection is a retryable network_error for every provider', async () => {
    for (const provider of ['anthropic', 'openai', 'google'] as const) {
      const e = await failure(PROVIDER_STREAMS[provider](ask('x'), call('http://127.0.0.1:9')));
      expect(e).toMatchObject({ type: 'network_error', retryable: true, provider });
    }
  });
});
