import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Holds } from '../testing/scripted-llm/holds';
import { DEFAULT_HOLD_TIMEOUT_MS } from '../testing/scripted-llm/playback';
import type { RequestOutcome } from '../testing/scripted-llm/request-log';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { eventually } from './support/eventually';

/* eslint-disable @typescript-eslint/no-explicit-any -- wire frames are checked field by field */

let llm: ScriptedLlm;
const agent = new Agent();
let counter = 0;
/** A fresh model name per test, so no test can pop another's reply. */
const modelName = (prefix = 'scripted') => `${prefix}-${++counter}`;

/** Resolves once the model's first request is recorded with `outcome`: the server settles it just after the client sees the end. */
const recordedAs = (model: string, outcome: RequestOutcome) =>
  eventually(
    `the request for ${model} to be recorded as ${outcome}`,
    () => {
      const seen = llm.requests({ model })[0]?.outcome;
      if (seen === outcome) return true;
      throw new Error(`recorded as ${seen ?? 'nothing yet'}`);
    },
    5_000,
    20,
  );

beforeAll(async () => {
  // Refusing what is not scripted: this file tests the scripted replies, and one of its
  // tests that scripts too few must fail loudly, not get the demo model's answer.
  llm = await startScriptedLlm({ demo: false });
});
afterAll(async () => {
  await llm.close();
  await agent.close();
});

interface SseFrame {
  event?: string;
  data?: string;
  comment?: string;
}

function parseSse(raw: string): SseFrame[] {
  return raw
    .split(/\r\n\r\n|\n\n/)
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const frame: SseFrame = {};
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith(':')) frame.comment = line.slice(1).trim();
        else if (line.startsWith('event: ')) frame.event = line.slice(7);
        else if (line.startsWith('data: ')) frame.data = line.slice(6);
      }
      return frame;
    });
}

const json = (frame: SseFrame | undefined): any => JSON.parse(frame?.data ?? 'null');
const dataFrames = (frames: SseFrame[]) => frames.filter((f) => f.data !== undefined);

async function post(path: string, body: unknown, opts: { signal?: AbortSignal; headers?: Record<string, string>; onHeaders?: () => void } = {}) {
  const started = Date.now();
  const res = await request(`${llm.url}${path}`, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'application/json', ...opts.headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  const headersAfterMs = Date.now() - started;
  opts.onHeaders?.();
  const raw = await res.body.text();
  return { status: res.statusCode, headers: res.headers, raw, frames: parseSse(raw), headersAfterMs };
}

type Provider = 'anthropic' | 'openai' | 'google';

/** A minimal streaming request of each provider, as our adapters send it. */
function send(provider: Provider, model: string, userText = 'hello', opts: { signal?: AbortSignal; onHeaders?: () => void } = {}) {
  switch (provider) {
    case 'anthropic':
      return post(
        '/v1/messages',
        { model, max_tokens: 256, stream: true, messages: [{ role: 'user', content: userText }] },
        { ...opts, headers: { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' } },
      );
    case 'openai':
      return post(
        '/chat/completions',
        { model, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: userText }] },
        { ...opts, headers: { authorization: 'Bearer sk-openai-test' } },
      );
    case 'google':
      return post(
        `/v1beta/models/${model}:streamGenerateContent?alt=sse`,
        { contents: [{ role: 'user', parts: [{ text: userText }] }] },
        { ...opts, headers: { 'x-goog-api-key': 'gemini-test' } },
      );
  }
}

/** The text a client would assemble from a stream, per provider. */
function textOf(provider: Provider, frames: SseFrame[]): string {
  const payloads = dataFrames(frames)
    .filter((f) => f.data !== '[DONE]')
    .map(json);
  switch (provider) {
    case 'anthropic':
      return payloads
        .filter((p) => p.type === 'content_block_delta' && p.delta.type === 'text_delta')
        .map((p) => p.delta.text)
        .join('');
    case 'openai':
      return payloads.map((p) => p.choices?.[0]?.delta?.content ?? '').join('');
    case 'google':
      return payloads.map((p) => (p.candidates?.[0]?.content?.parts ?? []).map((part: any) => part.text ?? '').join('')).join('');
  }
}

/** Whether the stream carries its provider's terminal sentinel. */
function hasSentinel(provider: Provider, frames: SseFrame[]): boolean {
  const data = dataFrames(frames);
  switch (provider) {
    case 'anthropic':
      return data.some((f) => f.event === 'message_stop');
    case 'openai':
      return data.some((f) => f.data === '[DONE]') || data.some((f) => f.data !== '[DONE]' && json(f).choices?.[0]?.finish_reason);
    case 'google':
      return data.some((f) => json(f).candidates?.[0]?.finishReason !== undefined);
  }
}

const PROVIDERS: Provider[] = ['anthropic', 'openai', 'google'];

describe('Anthropic Messages stream', () => {
  it('streams text as message_start, one text block of deltas, message_delta end_turn and message_stop', async () => {
    const model = modelName();
    llm.script(model, { kind: 'text', text: 'Hello from the scripted model.', chunkSize: 10 });
    const { status, headers, frames } = await send('anthropic', model);

    expect(status).toBe(200);
    expect(headers['content-type']).toMatch(/^text\/event-stream/);
    expect(frames.map((f) => f.event)).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    // The event name and the payload's type agree, as in the real stream.
    for (const frame of frames) expect(json(frame).type).toBe(frame.event);
    const start = json(frames[0]).message;
    expect(start).toMatchObject({ role: 'assistant', model, content: [], stop_reason: null });
    expect(start.id).toMatch(/^msg_/);
    expect(start.usage.input_tokens).toBeGreaterThan(0);
    expect(textOf('anthropic', frames)).toBe('Hello from the scripted model.');
    expect(json(frames[7])).toMatchObject({ delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 8 } });
  });

  it('streams a tool call as a tool_use block whose arguments arrive as input_json_delta pieces', async () => {
    const model = modelName();
    const input = { path: 'README.md', maxLines: 40 };
    llm.script(model, { kind: 'tool_calls', text: 'Reading it.', calls: [{ name: 'read_file', input }, { id: 'toolu_fixed', name: 'list_dir' }] });
    const { frames } = await send('anthropic', model);
    const payloads = frames.map(json);

    const starts = payloads.filter((p) => p.type === 'content_block_start');
    expect(starts.map((p) => p.content_block.type)).toEqual(['text', 'tool_use', 'tool_use']);
    expect(starts[1].index).toBe(1);
    expect(starts[1].content_block).toMatchObject({ name: 'read_file', input: {} });
    expect(starts[1].content_block.id).toMatch(/^toolu_[A-Za-z0-9]{20,}$/);
    expect(starts[2].content_block.id).toBe('toolu_fixed');

    const pieces = payloads.filter((p) => p.type === 'content_block_delta' && p.index === 1).map((p) => p.delta);
    expect(pieces.every((d) => d.type === 'input_json_delta')).toBe(true);
    expect(pieces.filter((d) => d.partial_json !== '').length).toBeGreaterThanOrEqual(2);
    expect(JSON.parse(pieces.map((d) => d.partial_json).join(''))).toEqual(input);
    expect(payloads.find((p) => p.type === 'message_delta').delta.stop_reason).toBe('tool_use');
    expect(payloads.filter((p) => p.type === 'content_block_stop').map((p) => p.index)).toEqual([0, 1, 2]);
  });

  it('answers a scripted status with its headers and an Anthropic error body', async () => {
    const model = modelName();
    llm.script(model, { kind: 'status', status: 529, headers: { 'retry-after': '3' } });
    const { status, headers, raw } = await send('anthropic', model);

    expect(status).toBe(529);
    expect(headers['retry-after']).toBe('3');
    expect(headers['content-type']).toBe('application/json');
    expect(JSON.parse(raw)).toMatchObject({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
  });

  it('shapes the error body from errorType and message, e.g. a prompt that is too long', async () => {
    const model = modelName();
    llm.script(model, { kind: 'status', status: 400, message: 'prompt is too long: 210000 tokens > 200000 maximum' });
    const { status, raw } = await send('anthropic', model);

    expect(status).toBe(400);
    expect(JSON.parse(raw).error).toEqual({ type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' });
  });

  it('ends a truncated stream cleanly, without message_delta or message_stop', async () => {
    const model = modelName();
    llm.script(model, { kind: 'truncate', text: 'Half a sent' });
    const { status, frames } = await send('anthropic', model);

    expect(status).toBe(200);
    expect(textOf('anthropic', frames)).toBe('Half a sent');
    expect(frames.map((f) => f.event)).not.toContain('message_delta');
    expect(hasSentinel('anthropic', frames)).toBe(false);
  });

  it('sends an error event after the stream has started', async () => {
    const model = modelName();
    llm.script(model, { kind: 'stream_error', text: 'Let me th' });
    const { status, frames } = await send('anthropic', model);

    expect(status).toBe(200);
    expect(frames[0]?.event).toBe('message_start');
    const last = frames.at(-1)!;
    expect(last.event).toBe('error');
    expect(JSON.parse(last.data!)).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    expect(hasSentinel('anthropic', frames)).toBe(false);
  });

  it('streams an empty reply as a complete message with no content block', async () => {
    const model = modelName();
    llm.script(model, { kind: 'empty' });
    const { frames } = await send('anthropic', model);

    expect(frames.map((f) => f.event)).toEqual(['message_start', 'message_delta', 'message_stop']);
    expect(json(frames[1]).delta.stop_reason).toBe('end_turn');
  });

  it('reports max_tokens when the script says the reply was cut by the token limit', async () => {
    const model = modelName();
    llm.script(model, { kind: 'text', text: 'and then', stopReason: 'max_tokens' });
    const { frames } = await send('anthropic', model);

    expect(frames.map(json).find((p) => p.type === 'message_delta').delta.stop_reason).toBe('max_tokens');
  });
});

describe('OpenAI Chat Completions stream', () => {
  it('streams text as chat.completion.chunk deltas, a stop chunk, a usage chunk and [DONE]', async () => {
    const model = modelName();
    llm.script(model, { kind: 'text', text: 'Hello from the scripted model.', chunkSize: 10, usage: { inputTokens: 12, outputTokens: 7 } });
    const { status, frames } = await send('openai', model);

    expect(status).toBe(200);
    expect(frames.every((f) => f.event === undefined)).toBe(true);
    expect(frames.at(-1)?.data).toBe('[DONE]');
    const chunks = frames.slice(0, -1).map(json);
    for (const chunk of chunks) expect(chunk).toMatchObject({ object: 'chat.completion.chunk', model });
    expect(chunks[0].id).toMatch(/^chatcmpl-/);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks[0].choices[0].delta).toMatchObject({ role: 'assistant', content: '' });
    expect(textOf('openai', frames)).toBe('Hello from the scripted model.');

    const [finish, usage] = chunks.slice(-2);
    expect(finish.choices).toEqual([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]);
    expect(usage.choices).toEqual([]);
    expect(usage.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 });
    // Before the usage chunk every chunk says usage: null, as the real API does with include_usage.
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
  });

  it('leaves out the usage chunk unless stream_options.include_usage is set', async () => {
    const model = modelName();
    llm.script(model, { kind: 'text', text: 'hi' });
    const { frames } = await post('/chat/completions', { model, stream: true, messages: [{ role: 'user', content: 'x' }] });
    const chunks = frames.slice(0, -1).map(json);

    expect(chunks.every((c) => !('usage' in c))).toBe(true);
    expect(chunks.at(-1).choices[0].finish_reason).toBe('stop');
    expect(frames.at(-1)?.data).toBe('[DONE]');
  });

  it('streams tool calls by index with the id and name first and the arguments split across chunks', async () => {
    const model = modelName();
    const input = { path: 'src/index.ts', offset: 120 };
    llm.script(model, { kind: 'tool_calls', calls: [{ name: 'read_file', input }, { name: 'list_dir', input: { path: '.' } }] });
    const { frames } = await send('openai', model);
    const deltas = frames
      .filter((f) => f.data !== '[DONE]')
      .map(json)
      .flatMap((c) => c.choices.map((ch: any) => ch.delta.tool_calls ?? []))
      .flat();

    const first = deltas.filter((d: any) => d.index === 0);
    expect(first[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'read_file', arguments: '' } });
    expect(first[0].id).toMatch(/^call_[A-Za-z0-9]{20,}$/);
    expect(first.slice(1).every((d: any) => d.id === undefined && d.function.name === undefined)).toBe(true);
    expect(first.length - 1).toBeGreaterThanOrEqual(2);
    expect(JSON.parse(first.map((d: any) => d.function.arguments).join(''))).toEqual(input);
    expect(deltas.filter((d: any) => d.index === 1)[0].function.name).toBe('list_dir');

    const chunks = frames.filter((f) => f.data !== '[DONE]').map(json);
    expect(chunks[0].choices[0].delta).toMatchObject({ role: 'assistant', content: null });
    expect(chunks.find((c) => c.choices[0]?.finish_reason).choices[0].finish_reason).toBe('tool_calls');
  });

  it('sends rawArguments verbatim, so a test can hand the client invalid JSON', async () => {
    const model = modelName();
    llm.script(model, { kind: 'tool_calls', calls: [{ name: 'read_file', rawArguments: '{"path": "READ' }] });
    const { frames } = await send('openai', model);
    const args = frames
      .filter((f) => f.data !== '[DONE]')
      .map(json)
      .flatMap((c) => c.choices.flatMap((ch: any) => ch.delta.tool_calls ?? []))
      .map((d: any) => d.function.arguments)
      .join('');

    expect(args).toBe('{"path": "READ');
  });

  it('also serves /v1/chat/completions, for base URLs that stop at the host', async () => {
    const model = modelName();
    llm.script(model, { kind: 'text', text: 'routed' });
    const { status, frames } = await post('/v1/chat/completions', { model, stream: true, messages: [] });

    expect(status).toBe(200);
    expect(textOf('openai', frames)).toBe('routed');
  });

  it('answers a quota 429 with insufficient_quota and a context overflow with context_length_exceeded', async () => {
    const model = modelName();
    llm.script(model, { kind: 'status', status: 429, code: 'insufficient_quota' }, { kind: 'status', status: 400, code: 'context_length_exceeded' });

    const quota = await send('openai', model);
    expect(quota.status).toBe(429);
    expect(JSON.parse(quota.raw)).toEqual({
      error: {
        message: expect.stringContaining('exceeded your current quota'),
        type: 'insufficient_quota',
        param: null,
        code: 'insufficient_quota',
      },
    });

    const overflow = await send('openai', model);
    expect(overflow.status).toBe(400);
    expect(JSON.parse(overflow.raw).error).toMatchObject({ type: 'invalid_request_error', code: 'context_length_exceeded' });
    expect(JSON.parse(overflow.raw).error.message).toMatch(/maximum context length/);
  });

  it('answers a rate-limit 429 with rate_limit_exceeded and the scripted reset headers', async () => {
    const model = modelName();
    llm.script(model, { kind: 'status', status: 429, headers: { 'retry-after-ms': '1500', 'x-ratelimit-reset-requests': '6m0s' } });
    const { status, headers, raw } = await send('openai', model);

    expect(status).toBe(429);
    expect(headers['retry-after-ms']).toBe('1500');
    expect(headers['x-ratelimit-reset-requests']).toBe('6m0s');
    expect(JSON.parse(raw).error).toMatchObject({ type: 'requests', code: 'rate_limit_exceeded' });
  });

  it('ends a truncated stream cleanly, without a finish_reason or [DONE]', async () => {
    const model = modelName();
    llm.script(model, { kind: 'truncate', text: 'Half a sent' });
    const { status, frames } = await send('openai', model);

    expect(status).toBe(200);
    expect(textOf('openai', frames)).toBe('Half a sent');
    expect(hasSentinel('openai', frames)).toBe(false);
  });

  it('sends an error object as a data frame after the stream has started', async () => {
    const model = modelName();
    llm.script(model, { kind: 'stream_error', text: 'Let me', errorType: 'server_error', message: 'upstream hiccup' });
    const { frames } = await send('openai', model);

    expect(json(frames[0]).choices[0].delta.role).toBe('assistant');
    expect(json(frames.at(-1))).toEqual({ error: { message: 'upstream hiccup', type: 'server_error', param: null, code: null } });
    expect(hasSentinel('openai', frames)).toBe(false);
  });

  it('reports length as the finish reason when the reply hit the token limit', async () => {
    const model = modelName();
    llm.script(model, { kind: 'text', text: 'and then', stopReason: 'max_tokens' });
    const { frames } = await send('openai', model);
    const finish = frames.filter((f) => f.data !== '[DONE]').map(json).find((c) => c.choices[0]?.finish_reason);

    expect(finish.choices[0].finish_reason).toBe('length');
  });

  it('streams an empty reply as a role chunk, a stop chunk and [DONE]', async () => {
    const model = modelName();
    llm.script(model, { kind: 'empty' });
    const { frames } = await send('openai', model);

    expect(textOf('openai', frames)).toBe('');
    expect(frames.at(-1)?.data).toBe('[DONE]');
    expect(frames.filter((f) => f.data !== '[DONE]').map(json).some((c) => c.choices[0]?.finish_reason === 'stop')).toBe(true);
  });
});

describe('Gemini streamGenerateContent (alt=sse)', () => {
  it('streams text as candidate chunks with CRLF line endings, the last carrying finishReason STOP', async () => {
    const model = 'gemini-scripted-' + ++counter;
    llm.script(model, { kind: 'text', text: 'Hello from the scripted model.', chunkSize: 10 });
    const { status, headers, raw, frames } = await send('google', model);

    expect(status).toBe(200);
    expect(headers['content-type']).toBe('text/event-stream');
    expect(raw.endsWith('\r\n\r\n')).toBe(true);
    expect(raw.replace(/\r\n/g, '')).not.toContain('\n');
    const chunks = frames.map(json);
    expect(chunks).toHaveLength(3);
    for (const chunk of chunks) {
      expect(chunk.candidates[0].content.role).toBe('model');
      expect(chunk.usageMetadata.promptTokenCount).toBeGreaterThan(0);
      expect(chunk.modelVersion).toBe(model);
    }
    expect(chunks.slice(0, -1).every((c) => c.candidates[0].finishReason === undefined)).toBe(true);
    expect(chunks.at(-1).candidates[0].finishReason).toBe('STOP');
    expect(textOf('google', frames)).toBe('Hello from the scripted model.');
    // usageMetadata is cumulative, so the last chunk holds the whole reply's count.
    const counts = chunks.map((c) => c.usageMetadata.candidatesTokenCount);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(counts.at(-1)).toBe(8);
  });

  it('sends each function call whole, as a functionCall part with args as an object', async () => {
    const model = modelName('gemini');
    llm.script(model, { kind: 'tool_calls', text: 'Reading.', calls: [{ name: 'read_file', input: { path: 'README.md' } }, { name: 'list_dir' }] });
    const { frames } = await send('google', model);
    const parts = frames.map(json).flatMap((c) => c.candidates[0].content.parts);

    expect(parts.filter((p: any) => p.functionCall).map((p: any) => p.functionCall)).toEqual([
      { name: 'read_file', args: { path: 'README.md' } },
      { name: 'list_dir', args: {} },
    ]);
    expect(json(frames.at(-1)).candidates[0].finishReason).toBe('STOP');
  });

  it('answers a scripted status with a Google error body', async () => {
    const model = modelName('gemini');
    llm.script(model, { kind: 'status', status: 503, headers: { 'retry-after': '2' } }, { kind: 'status', status: 429 });

    const unavailable = await send('google', model);
    expect(unavailable.status).toBe(503);
    expect(unavailable.headers['retry-after']).toBe('2');
    expect(JSON.parse(unavailable.raw)).toEqual({
      error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' },
    });
    const exhausted = await send('google', model);
    expect(JSON.parse(exhausted.raw).error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED' });
  });

  it('ends a truncated stream cleanly, without finishReason', async () => {
    const model = modelName('gemini');
    llm.script(model, { kind: 'truncate', text: 'Half a sent' });
    const { status, frames } = await send('google', model);

    expect(status).toBe(200);
    expect(textOf('google', frames)).toBe('Half a sent');
    expect(hasSentinel('google', frames)).toBe(false);
  });

  it('sends an error object as a data frame after the stream has started', async () => {
    const model = modelName('gemini');
    llm.script(model, { kind: 'stream_error', text: 'Let me' });
    const { frames } = await send('google', model);

    expect(textOf('google', frames.slice(0, -1))).toBe('Let me');
    expect(json(frames.at(-1))).toEqual({
      error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' },
    });
  });

  it('reports MAX_TOKENS when the reply hit the token limit', async () => {
    const model = modelName('gemini');
    llm.script(model, { kind: 'text', text: 'and then', stopReason: 'max_tokens' });
    const { frames } = await send('google', model);

    expect(json(frames.at(-1)).candidates[0].finishReason).toBe('MAX_TOKENS');
  });

  it('streams an empty reply as one chunk whose content has no parts, as Gemini really does', async () => {
    const model = modelName('gemini');
    llm.script(model, { kind: 'empty' });
    const { frames } = await send('google', model);

    expect(frames.map(json)).toEqual([
      expect.objectContaining({ candidates: [{ content: { role: 'model' }, finishReason: 'STOP', index: 0 }] }),
    ]);
  });

  it('refuses a request without alt=sse and keeps the scripted reply for the next request', async () => {
    const model = modelName('gemini');
    llm.script(model, { kind: 'text', text: 'still here' });
    const refused = await post(`/v1beta/models/${model}:streamGenerateContent`, { contents: [] });

    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.raw).error).toMatchObject({ status: 'INVALID_ARGUMENT', message: expect.stringContaining('alt=sse') });
    expect(llm.pending(model)).toBe(1);
    expect(textOf('google', (await send('google', model)).frames)).toBe('still here');
  });
});

describe('reasoning signatures, refused as the real APIs refuse them', () => {
  const thinkingRequest = (model: string, messages: unknown[]) =>
    post('/v1/messages', { model, max_tokens: 3_000, thinking: { type: 'enabled', budget_tokens: 2_048 }, stream: true, messages }, { headers: { 'x-api-key': 'sk-ant-test' } });

  it('Anthropic with thinking on: streams a signed thinking block first, and takes it back unchanged', async () => {
    const model = modelName('claude');
    llm.script(model, { kind: 'tool_calls', thinking: 'Use the calculator.', calls: [{ id: 'toolu_1', name: 'calculator', input: { expression: '1+1' } }] }, { kind: 'text', text: '2' });
    const first = await thinkingRequest(model, [{ role: 'user', content: 'what is 1+1?' }]);
    const payloads = dataFrames(first.frames).map(json);
    expect(payloads[1]).toMatchObject({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } });
    const signature = payloads.find((p) => p.delta?.type === 'signature_delta').delta.signature;
    const thinking = { type: 'thinking', thinking: 'Use the calculator.', signature };
    const toolUse = { type: 'tool_use', id: 'toolu_1', name: 'calculator', input: { expression: '1+1' } };
    const result = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '2' }] };

    const missing = await thinkingRequest(model, [{ role: 'user', content: 'what is 1+1?' }, { role: 'assistant', content: [toolUse] }, result]);
    expect(missing.status).toBe(400);
    expect(JSON.parse(missing.raw).error).toMatchObject({ type: 'invalid_request_error', message: expect.stringMatching(/^messages\.1\.content\.0\.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`/) });

    const altered = await thinkingRequest(model, [{ role: 'user', content: 'what is 1+1?' }, { role: 'assistant', content: [{ ...thinking, thinking: 'Use the calculator!' }, toolUse] }, result]);
    expect(altered.status).toBe(400);
    expect(JSON.parse(altered.raw).error.message).toBe('messages.1.content.0: Invalid `signature` in `thinking` block');

    const intact = await thinkingRequest(model, [{ role: 'user', content: 'what is 1+1?' }, { role: 'assistant', content: [thinking, toolUse] }, result]);
    expect(intact.status).toBe(200);
    expect(llm.pending(model)).toBe(0);
  });

  it('Gemini 3: signs the first function call of a step, and refuses it back without its signature in the real API\'s words', async () => {
    const model = modelName('gemini-3-flash');
    llm.script(model, { kind: 'tool_calls', calls: [{ name: 'calculator', input: { expression: '1+1' } }, { name: 'calculator', input: { expression: '2+2' } }] }, { kind: 'text', text: 'done' });
    const first = await send('google', model, 'compute');
    const parts = dataFrames(first.frames).flatMap((f) => json(f).candidates[0].content.parts ?? []);
    const [signed, bare] = parts.filter((p: any) => p.functionCall);
    expect(signed.thoughtSignature).toEqual(expect.any(String));
    expect(bare.thoughtSignature).toBeUndefined();
    const contents = (call: unknown) => [
      { role: 'user', parts: [{ text: 'compute' }] },
      { role: 'model', parts: [call, { functionCall: bare.functionCall }] },
      { role: 'user', parts: [{ functionResponse: { name: 'calculator', response: { output: '2' } } }, { functionResponse: { name: 'calculator', response: { output: '4' } } }] },
    ];
    const path = `/v1beta/models/${model}:streamGenerateContent?alt=sse`;

    const missing = await post(path, { contents: contents({ functionCall: signed.functionCall }) });
    expect(missing.status).toBe(400);
    expect(JSON.parse(missing.raw).error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT', message: expect.stringMatching(/^Function call is missing a thought_signature in functionCall parts\./) });

    const altered = await post(path, { contents: contents({ functionCall: { name: 'calculator', args: { expression: '1+2' } }, thoughtSignature: signed.thoughtSignature }) });
    expect(altered.status).toBe(400);

    const intact = await post(path, { contents: contents(signed) });
    expect(intact.status).toBe(200);
  });

  it('Gemini before 3 signs nothing and checks nothing', async () => {
    const model = modelName('gemini-2.5-flash');
    llm.script(model, { kind: 'tool_calls', calls: [{ name: 'calculator', input: {} }] });
    const parts = dataFrames((await send('google', model)).frames).flatMap((f) => json(f).candidates[0].content.parts ?? []);
    expect(parts.some((p: any) => 'thoughtSignature' in p)).toBe(false);
  });
});

describe.each(PROVIDERS)('every provider (%s)', (provider) => {
  it('with demo: false, fails loudly with a 400 naming the model when no reply is scripted for it', async () => {
    const model = modelName('unscripted');
    const { status, raw } = await send(provider, model);

    expect(status).toBe(400);
    expect(raw).toContain(`no reply is scripted for model \\"${model}\\"`);
    const body = JSON.parse(raw);
    if (provider === 'anthropic') expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    if (provider === 'openai') expect(body.error.type).toBe('invalid_request_error');
    if (provider === 'google') expect(body.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
    expect(llm.requests({ model })[0]).toMatchObject({ replyKind: 'unscripted', outcome: 'completed' });
  });

  it('echoes the last user message for an echo model with nothing scripted', async () => {
    const model = modelName('echo');
    const { status, frames } = await send(provider, model, 'is anyone there?');

    expect(status).toBe(200);
    expect(textOf(provider, frames)).toBe('You said: is anyone there?');
    expect(hasSentinel(provider, frames)).toBe(true);
    expect(llm.requests({ model })[0]?.replyKind).toBe('echo');
  });

  it('plays scripted replies before echoing, for an echo model', async () => {
    const model = modelName('echo');
    llm.script(model, { kind: 'text', text: 'scripted first' });

    expect(textOf(provider, (await send(provider, model, 'ping')).frames)).toBe('scripted first');
    expect(textOf(provider, (await send(provider, model, 'ping')).frames)).toBe('You said: ping');
  });

  it('fills a stall after the first content frame with keep-alive pings', async () => {
    const model = modelName();
    llm.script(model, { kind: 'text', text: 'thinking... done', chunkSize: 8, stall: { ms: 450, pingEveryMs: 100 } });
    const started = Date.now();
    const { frames } = await send(provider, model);

    expect(Date.now() - started).toBeGreaterThanOrEqual(440);
    const isPing = (f: SseFrame) => (provider === 'anthropic' ? f.event === 'ping' : f.comment === 'keep-alive');
    const firstContent = frames.findIndex((f) => textOf(provider, [f]) !== '');
    const pings = frames.map((f, i) => (isPing(f) ? i : -1)).filter((i) => i > firstContent);
    expect(pings).toEqual([firstContent + 1, firstContent + 2, firstContent + 3, firstContent + 4]);
    expect(textOf(provider, frames)).toBe('thinking... done');
    expect(hasSentinel(provider, frames)).toBe(true);
  });

  it('stalls in silence when no ping interval is given', async () => {
    const model = modelName();
    llm.script(model, { kind: 'text', text: 'slow answer', stall: { ms: 200 } });
    const started = Date.now();
    const { frames } = await send(provider, model);

    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(frames.filter((f) => f.comment !== undefined)).toEqual([]);
    // Anthropic's one ping is the one every real stream sends when its first block opens.
    expect(frames.filter((f) => f.event === 'ping')).toHaveLength(provider === 'anthropic' ? 1 : 0);
  });

  it('destroys the socket mid-stream for a reset reply', async () => {
    const model = modelName();
    llm.script(model, { kind: 'reset', text: 'cut here' });

    await expect(send(provider, model)).rejects.toThrow(/other side closed|terminated|socket/i);
    await recordedAs(model, 'reset');
  });

  it('sends one data frame that is not JSON for a malformed reply', async () => {
    const model = modelName();
    llm.script(model, { kind: 'malformed', text: 'abc' });
    const { frames } = await send(provider, model);
    const broken = dataFrames(frames).filter((f) => {
      if (f.data === '[DONE]') return false;
      try {
        JSON.parse(f.data!);
        return false;
      } catch {
        return true;
      }
    });

    expect(broken).toHaveLength(1);
  });

  it('records a client that goes away mid-stream as aborted-by-client, and goes on serving', async () => {
    const model = modelName();
    llm.script(model, { kind: 'text', text: 'never finished', stall: { ms: -1 } }, { kind: 'text', text: 'next' });
    const controller = new AbortController();
    // Aborted once the response has begun: the headers are out and the stream stalls after its first frames.
    const pending = send(provider, model, 'hello', { signal: controller.signal, onHeaders: () => controller.abort() });

    await expect(pending).rejects.toThrow();
    await recordedAs(model, 'aborted-by-client');
    expect(textOf(provider, (await send(provider, model)).frames)).toBe('next');
  });
});

describe('scripts', () => {
  it('gives each model its own FIFO queue, so interleaved sessions do not interfere', async () => {
    const a = modelName('a');
    const b = modelName('b');
    llm.script(a, { kind: 'text', text: 'a1' }, { kind: 'text', text: 'a2' });
    llm.script(b, { kind: 'text', text: 'b1' });

    expect(textOf('openai', (await send('openai', b)).frames)).toBe('b1');
    expect(textOf('anthropic', (await send('anthropic', a)).frames)).toBe('a1');
    expect(textOf('openai', (await send('openai', a)).frames)).toBe('a2');
    expect((await send('openai', b)).status).toBe(400);
  });

  it('rejects an invalid reply at script time with a message naming the model and the field', () => {
    expect(() => llm.script('bad-model', { kind: 'text', text: 'x', chunk_size: 3 } as never)).toThrow(/bad-model[\s\S]*chunk_size/);
    expect(() => llm.script('bad-model', { kind: 'status', status: 200 } as never)).toThrow(/status/);
    expect(() => llm.script('bad-model', { kind: 'nonsense' } as never)).toThrow(/kind/);
    expect(() =>
      llm.script('bad-model', { kind: 'tool_calls', calls: [{ name: 'f', input: {}, rawArguments: '{}' }] }),
    ).toThrow(/either input or rawArguments/);
    expect(llm.pending('bad-model')).toBe(0);
  });

  it('refuses a non-streaming request with a 400 and leaves the script untouched', async () => {
    const model = modelName();
    llm.script(model, { kind: 'text', text: 'kept' });
    const { status, raw } = await post('/v1/messages', { model, max_tokens: 10, messages: [] });

    expect(status).toBe(400);
    expect(JSON.parse(raw).error.message).toMatch(/stream/);
    expect(llm.pending(model)).toBe(1);
    expect(llm.requests({ model })[0]?.replyKind).toBe('invalid');
  });

  it('answers an unknown path with a 404 that lists the routes it serves', async () => {
    const { status, raw } = await post('/v1/completions', {});
    expect(status).toBe(404);
    expect(raw).toContain('/v1/messages');
  });

  it('delays the response headers by delayMs and spaces frames by chunkDelayMs', async () => {
    const model = modelName();
    llm.script(model, { kind: 'text', text: 'abcdefgh', chunkSize: 2, delayMs: 200, chunkDelayMs: 50 });
    const started = Date.now();
    const { headersAfterMs } = await send('openai', model);

    expect(headersAfterMs).toBeGreaterThanOrEqual(190);
    // Role chunk, 4 text chunks, stop, usage, [DONE]: 7 gaps of 50 ms after the headers.
    expect(Date.now() - started).toBeGreaterThanOrEqual(190 + 7 * 50 - 10);
  });

  it('holds a request until release() is called', async () => {
    const model = modelName();
    llm.script(model, { kind: 'text', text: 'released', hold: true });
    let done = false;
    const pending = send('anthropic', model).then((r) => {
      done = true;
      return r;
    });
    await llm.waitForRequests(1, { model });

    // Still held when released: the hold let nothing through on its own (its timeout is the fake-timer test below).
    expect(done).toBe(false);
    expect(llm.release(model)).toBe(1);
    expect(textOf('anthropic', (await pending).frames)).toBe('released');
  });

  it('plays a held reply anyway once holdTimeoutMs has passed', async () => {
    const model = modelName();
    llm.script(model, { kind: 'text', text: 'timed out', hold: true, holdTimeoutMs: 150 });
    const started = Date.now();
    const { frames } = await send('openai', model);

    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(textOf('openai', frames)).toBe('timed out');
  });

  it('keeps a held request waiting for 30 s by default, and lets it play as timed out at 30 s, not before', async () => {
    vi.useFakeTimers();
    try {
      const holds = new Holds();
      let outcome: string | undefined;
      void holds.wait('held-model', DEFAULT_HOLD_TIMEOUT_MS, new AbortController().signal).then((o) => (outcome = o));
      await vi.advanceTimersByTimeAsync(29_999);
      expect([outcome, holds.held('held-model')]).toEqual([undefined, 1]);
      await vi.advanceTimersByTimeAsync(1);
      expect([outcome, holds.held('held-model')]).toEqual(['timed-out', 0]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses to listen on an address other than loopback', async () => {
    await expect(startScriptedLlm({ host: '0.0.0.0' })).rejects.toThrow(/loopback/);
  });

  it('records a client that gives up on a held request as aborted-by-client', async () => {
    const model = modelName();
    llm.script(model, { kind: 'text', text: 'too late', hold: true });
    const controller = new AbortController();
    const pending = send('openai', model, 'hello', { signal: controller.signal });
    await llm.waitForRequests(1, { model });
    controller.abort();

    await expect(pending).rejects.toThrow();
    await recordedAs(model, 'aborted-by-client');
    expect(llm.release(model)).toBe(0);
  });

  it('ends a request hanging in a stall when closed, recorded as aborted-by-server', async () => {
    const own = await startScriptedLlm();
    own.script('hang', { kind: 'text', text: 'forever', stall: { ms: -1 } });
    // The headers have arrived, so the reply has begun and hangs in its stall.
    const { body } = await request(`${own.url}/chat/completions`, {
      method: 'POST',
      dispatcher: agent,
      body: JSON.stringify({ model: 'hang', stream: true, messages: [] }),
    });
    await own.close();

    await expect(body.text()).rejects.toThrow();
    expect(own.requests()[0]?.outcome).toBe('aborted-by-server');
  });
});

describe('request recording', () => {
  it('records provider, model, path, headers (keys included), body and arrival times in order', async () => {
    const model = modelName('rec');
    const gemini = modelName('gemini-rec');
    llm.script(model, { kind: 'status', status: 529 }, { kind: 'text', text: 'ok' });
    llm.script(gemini, { kind: 'empty' });
    const before = Date.now();
    await send('anthropic', model, 'first');
    const between = Date.now();
    await send('openai', model, 'second');
    await send('google', gemini, 'third');

    const [first, second] = llm.requests({ model });
    expect(first).toMatchObject({
      provider: 'anthropic',
      model,
      method: 'POST',
      path: '/v1/messages',
      replyKind: 'status',
      outcome: 'completed',
      body: { model, messages: [{ role: 'user', content: 'first' }] },
    });
    expect(first!.headers['x-api-key']).toBe('sk-ant-test');
    expect(second).toMatchObject({ provider: 'openai', path: '/chat/completions', replyKind: 'text' });
    expect(second!.headers.authorization).toBe('Bearer sk-openai-test');
    expect(first!.at).toBeGreaterThanOrEqual(before);
    expect(first!.at).toBeLessThanOrEqual(between);
    expect(second!.at).toBeGreaterThanOrEqual(between);
    expect(second!.seq).toBeGreaterThan(first!.seq);
    expect(first!.endedAt).toBeGreaterThanOrEqual(first!.at);

    const [google] = llm.requests({ model: gemini });
    expect(google).toMatchObject({ provider: 'google', model: gemini, path: `/v1beta/models/${gemini}:streamGenerateContent?alt=sse` });
    expect(google!.headers['x-goog-api-key']).toBe('gemini-test');
    expect(llm.requests({ provider: 'google', model: gemini })).toHaveLength(1);
  });

  it('waits for a number of requests, and says how many it saw when they do not come', async () => {
    const model = modelName('wait');
    llm.script(model, { kind: 'text', text: 'one' }, { kind: 'text', text: 'two' });
    const waiting = llm.waitForRequests(2, { model }, 5_000);
    await send('openai', model);
    await send('openai', model);

    expect((await waiting).map((r) => r.replyKind)).toEqual(['text', 'text']);
    await expect(llm.waitForRequests(3, { model }, 100)).rejects.toThrow(/3 request\(s\) for model "wait-\d+", saw 2/);
  });
});

describe('control API', () => {
  async function control(method: string, path: string, body?: unknown) {
    const res = await request(`${llm.url}${path}`, {
      method: method as 'GET',
      dispatcher: agent,
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    return { status: res.statusCode, body: (await res.body.json()) as any };
  }

  it('queues replies posted to /_scripted/{model}, model names with slashes included', async () => {
    const model = `org/${modelName('ctl')}`;
    const posted = await control('POST', `/_scripted/${encodeURIComponent(model)}`, [
      { kind: 'text', text: 'over http' },
      { kind: 'status', status: 500 },
    ]);

    expect(posted).toEqual({ status: 200, body: { model, pending: 2 } });
    expect((await control('GET', `/_scripted/${encodeURIComponent(model)}`)).body).toEqual({ model, pending: 2, pendingCompactions: 0, held: 0, contextWindow: null });
    expect(textOf('openai', (await send('openai', model)).frames)).toBe('over http');
  });

  it('rejects a bad script with a 400 whose message names the model and the field', async () => {
    const notArray = await control('POST', '/_scripted/ctl-bad', { kind: 'text', text: 'x' });
    expect(notArray.status).toBe(400);
    expect(notArray.body.error).toMatch(/JSON array/);

    const badField = await control('POST', '/_scripted/ctl-bad', [{ kind: 'text' }]);
    expect(badField.status).toBe(400);
    expect(badField.body.error).toMatch(/ctl-bad[\s\S]*text/);

    const notJson = await control('POST', '/_scripted/ctl-bad', '[{');
    expect(notJson.status).toBe(400);
    expect(notJson.body.error).toMatch(/not valid JSON/);
    expect(llm.pending('ctl-bad')).toBe(0);
  });

  it('lists recorded requests filtered by model at GET /_scripted/requests', async () => {
    const model = modelName('ctl');
    llm.script(model, { kind: 'text', text: 'x' });
    await send('anthropic', model);
    const { status, body } = await control('GET', `/_scripted/requests?model=${model}`);

    expect(status).toBe(200);
    expect(body).toHaveLength(1);
    expect(body[0]).toMatchObject({ model, provider: 'anthropic', replyKind: 'text', outcome: 'completed' });
    expect(typeof body[0].at).toBe('number');
  });

  it('drops a model queue on DELETE /_scripted/{model}', async () => {
    const model = modelName('ctl');
    llm.script(model, { kind: 'text', text: 'x' }, { kind: 'text', text: 'y' });

    expect((await control('DELETE', `/_scripted/${model}`)).body).toEqual({ model, cleared: 2 });
    expect((await send('openai', model)).status).toBe(400);
  });

  it('releases held requests at POST /_scripted/_release?model=', async () => {
    const model = modelName('ctl');
    await control('POST', `/_scripted/${model}`, [{ kind: 'text', text: 'go', hold: true }]);
    const pending = send('openai', model);
    await llm.waitForRequests(1, { model });

    expect((await control('POST', `/_scripted/_release?model=${model}`)).body).toEqual({ model, released: 1 });
    expect(textOf('openai', (await pending).frames)).toBe('go');
  });
});

describe('command line', () => {
  it('prints its URL, serves the control API and stops cleanly on SIGTERM', async () => {
    const child = spawn(process.execPath, ['bin/launch.js', 'testing/scripted-llm/main.ts', '--port', '0'], {
      cwd: new URL('..', import.meta.url).pathname,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(line)?.[1];
      expect(url).toBeDefined();

      const res = await request(`${url}/_scripted/cli-model`, {
        method: 'POST',
        dispatcher: agent,
        body: JSON.stringify([{ kind: 'text', text: 'from the cli' }]),
      });
      expect(await res.body.json()).toEqual({ model: 'cli-model', pending: 1 });

      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 20_000);

  it('refuses a non-loopback host unless SCRIPTED_LLM_ALLOW_NON_LOOPBACK=1 opts in (docker-compose does)', async () => {
    const run = (env: Record<string, string>) => {
      const child = spawn(process.execPath, ['bin/launch.js', 'testing/scripted-llm/main.ts', '--port', '0', '--host', '0.0.0.0'], {
        cwd: new URL('..', import.meta.url).pathname,
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      return child;
    };
    const refused = run({});
    let stderr = '';
    refused.stderr!.on('data', (chunk) => (stderr += chunk));
    expect((await once(refused, 'exit'))[0]).toBe(1);
    expect(stderr).toMatch(/--host: must be a loopback address .*SCRIPTED_LLM_ALLOW_NON_LOOPBACK=1/);

    const allowed = run({ SCRIPTED_LLM_ALLOW_NON_LOOPBACK: '1' });
    try {
      const [line] = (await once(createInterface({ input: allowed.stdout! }), 'line')) as [string];
      expect(line).toMatch(/listening on http:\/\/0\.0\.0\.0:\d+$/);
    } finally {
      allowed.kill('SIGKILL');
    }
  }, 20_000);

  it('answers a model with nothing scripted as the demo model, and with --refuse-unscripted refuses it with the loud 400', async () => {
    const start = async (...flags: string[]) => {
      const child = spawn(process.execPath, ['bin/launch.js', 'testing/scripted-llm/main.ts', '--port', '0', ...flags], {
        cwd: new URL('..', import.meta.url).pathname,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
      return { child, url: /listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(line)?.[1] ?? '' };
    };
    const ask = (url: string) =>
      request(`${url}/chat/completions`, {
        method: 'POST',
        dispatcher: agent,
        body: JSON.stringify({ model: 'gpt-4.1', stream: true, messages: [{ role: 'user', content: 'hello' }] }),
      });
    const [demo, strict] = await Promise.all([start(), start('--refuse-unscripted')]);
    try {
      const answered = await ask(demo.url);
      expect(answered.statusCode).toBe(200);
      expect(textOf('openai', parseSse(await answered.body.text()))).toContain('offline demo model');

      const refused = await ask(strict.url);
      expect(refused.statusCode).toBe(400);
      expect(await refused.body.text()).toContain('no reply is scripted for model \\"gpt-4.1\\"');
    } finally {
      demo.child.kill('SIGKILL');
      strict.child.kill('SIGKILL');
    }
  }, 20_000);

  it('stops with one line naming the flag when the port is not a number', async () => {
    const child = spawn(process.execPath, ['bin/launch.js', 'testing/scripted-llm/main.ts', '--port', 'eighty'], {
      cwd: new URL('..', import.meta.url).pathname,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const [code] = await once(child, 'exit');

    expect(code).toBe(1);
    expect(stderr.trim()).toMatch(/^scripted LLM: --port: /);
  }, 20_000);
});
