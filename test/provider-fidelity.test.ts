import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROVIDER_STREAMS } from '../activities/llm/providers';
import { anthropicRequestBody } from '../activities/llm/providers/anthropic';
import { geminiRequestBody } from '../activities/llm/providers/gemini';
import { openAiRequestBody } from '../activities/llm/providers/openai';
import { stableTools } from '../activities/llm/providers/stable-tools';
import { conversationOf } from '../contracts/conversation';
import { NON_RETRYABLE_LLM_ERROR_TYPES, RETRYABLE_LLM_ERROR_TYPES } from '../contracts/errors';
import type { LlmRequest, Reasoning, ToolSpec } from '../contracts/messages';
import type { SessionEvent } from '../contracts/session-log';
import { frameAsApi, startFixtureServer, type FixtureServer } from './support/fixture-stream-server';

const request = (over: Partial<LlmRequest> = {}): LlmRequest => ({ model: 'm', messages: [{ role: 'user', text: 'hi' }], tools: [], maxTokens: 1_000, ...over });

describe('reasoning, as each provider takes it', () => {
  it.each<[Reasoning, number]>([
    ['low', 2_048],
    ['medium', 8_192],
    ['high', 24_576],
    [5_000, 5_000],
  ])('Anthropic %s: thinking enabled with budget %i; a cap below the budget is raised by it, so the answer keeps its room', (reasoning, budget) => {
    expect(anthropicRequestBody(request({ reasoning }))).toMatchObject({ thinking: { type: 'enabled', budget_tokens: budget }, max_tokens: 1_000 + budget });
  });

  it('Anthropic: a budget that fits under the cap stays within it (thinking counts against max_tokens)', () => {
    expect(anthropicRequestBody(request({ reasoning: 'high', maxTokens: 32_000 }))).toMatchObject({ thinking: { budget_tokens: 24_576 }, max_tokens: 32_000 });
  });

  it.each<[Reasoning, string]>([
    ['low', 'low'],
    ['high', 'high'],
    [2_000, 'low'],
    [8_000, 'medium'],
    [32_000, 'high'],
  ])('OpenAI %s: reasoning_effort %s', (reasoning, effort) => {
    expect(openAiRequestBody(request({ reasoning }), 'https://api.openai.com/v1')).toMatchObject({ reasoning_effort: effort });
  });

  it('Gemini: a level is thinkingLevel, a number thinkingBudget, both asking for thought summaries', () => {
    expect(geminiRequestBody(request({ reasoning: 'high' })).generationConfig).toEqual({ maxOutputTokens: 1_000, thinkingConfig: { thinkingLevel: 'high', includeThoughts: true } });
    expect(geminiRequestBody(request({ reasoning: 4_096 })).generationConfig).toEqual({ maxOutputTokens: 1_000, thinkingConfig: { thinkingBudget: 4_096, includeThoughts: true } });
  });

  it('off (or absent) sends nothing, so the provider default applies', () => {
    for (const reasoning of ['off', undefined] as const) {
      const r = request(reasoning === undefined ? {} : { reasoning });
      expect(anthropicRequestBody(r)).not.toHaveProperty('thinking');
      expect(anthropicRequestBody(r).max_tokens).toBe(1_000);
      expect(openAiRequestBody(r, 'https://api.openai.com/v1')).not.toHaveProperty('reasoning_effort');
      expect(geminiRequestBody(r).generationConfig).toEqual({ maxOutputTokens: 1_000 });
    }
  });
});

describe('a stable prompt prefix', () => {
  const a: ToolSpec = { name: 'a_tool', description: 'A', inputSchema: { type: 'object', required: ['x'], properties: { x: { type: 'string' }, b: { type: 'number' } } } };
  const b: ToolSpec = { name: 'b_tool', description: 'B', inputSchema: { properties: {}, type: 'object' } };

  it('serializes tools in name order with sorted keys, whatever order they come in', () => {
    const shuffled: ToolSpec = { name: 'a_tool', description: 'A', inputSchema: { properties: { b: { type: 'number' }, x: { type: 'string' } }, required: ['x'], type: 'object' } };
    expect(JSON.stringify(stableTools([b, a]))).toBe(JSON.stringify(stableTools([shuffled, b])));
    expect(stableTools([b, a]).map((t) => t.name)).toEqual(['a_tool', 'b_tool']);
  });
});

describe('provider data follows its provider only', () => {
  const thinking = { type: 'thinking' as const, thinking: 'hmm', signature: 'sig' };
  const events: SessionEvent[] = [
    { type: 'turn/start', seq: 0, at: 0, turn: 1, text: 'hi' },
    {
      type: 'assistant',
      seq: 1,
      at: 0,
      turn: 1,
      step: 1,
      message: {
        role: 'assistant',
        text: '',
        toolCalls: [{ id: 't1', name: 'calculator', input: { expression: '1+1' } }],
        stopReason: 'tool_use',
        usage: { inputTokens: 1, outputTokens: 1 },
        providerData: { provider: 'anthropic', thinking: [thinking] },
      },
    },
    { type: 'tool/result', seq: 2, at: 0, turn: 1, step: 1, callId: 't1', name: 'calculator', code: 'ok', content: '2' },
  ];

  it('keeps it for the provider that produced it, drops it for any other (a fork or a step on another provider)', () => {
    expect(conversationOf(events, 'anthropic')[1]).toMatchObject({ providerData: { provider: 'anthropic', thinking: [thinking] } });
    expect(conversationOf(events, 'google')[1]).not.toHaveProperty('providerData');
    expect(conversationOf(events, 'openai')[1]).not.toHaveProperty('providerData');
    expect(JSON.stringify(geminiRequestBody(request({ messages: conversationOf(events, 'google') })))).not.toContain('sig');
  });
});

/**
 * Stream shapes the plain recordings lack, built from the real events' fields: Gemini's
 * early usage with no counts, thought parts and a signature on only the first of parallel
 * calls (recorded only in Vertex streams, which also carry `partialArgs`), a Gemini answer
 * stopped by its filters, an Anthropic `redacted_thinking` block, an OpenAI `content_filter`.
 */
describe('stream shapes the recordings lack', () => {
  let server: FixtureServer;
  const agent = new Agent();
  beforeAll(async () => {
    server = await startFixtureServer();
  });
  afterAll(async () => {
    await server.close();
    await agent.close();
  });

  it('keeps thought summaries out of the answer, signs only what was signed, and ignores usage without counts', async () => {
    const lines = [
      { candidates: [{ content: { role: 'model', parts: [{ text: 'Reading the theme first.', thought: true }] } }], usageMetadata: { trafficType: 'ON_DEMAND' } },
      {
        candidates: [
          {
            content: {
              role: 'model',
              parts: [
                { functionCall: { name: 'read_screen', args: { id: 'A' } }, thoughtSignature: 'SIG-A' },
                { functionCall: { name: 'read_screen', args: { id: 'B' } } },
              ],
            },
          },
        ],
        usageMetadata: { trafficType: 'ON_DEMAND' },
      },
      { candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 26, candidatesTokenCount: 23, thoughtsTokenCount: 132, cachedContentTokenCount: 10 } },
    ].map((l) => JSON.stringify(l));
    server.serve(frameAsApi(lines, 'google'), []);
    const m = await PROVIDER_STREAMS.google(request(), { dispatcher: agent, baseUrl: server.url, apiKey: undefined, signal: new AbortController().signal, idleTimeoutMs: 5_000 });
    expect(m.text).toBe('');
    expect(m.toolCalls.map((c) => c.input)).toEqual([{ id: 'A' }, { id: 'B' }]);
    expect(m.stopReason).toBe('tool_use');
    expect(m.usage).toEqual({ inputTokens: 26, outputTokens: 23 + 132, cacheReadTokens: 10, cacheWriteTokens: 0, reasoningTokens: 132 });
    expect(m.providerData).toEqual({
      provider: 'google',
      parts: [
        { type: 'thought', text: 'Reading the theme first.' },
        { type: 'call', index: 0, thoughtSignature: 'SIG-A' },
        { type: 'call', index: 1 },
      ],
    });
    expect(geminiRequestBody(request({ messages: [{ role: 'user', text: 'hi' }, { role: 'assistant', text: m.text, toolCalls: m.toolCalls, providerData: m.providerData! }] })).contents[1]).toEqual({
      role: 'model',
      parts: [
        { text: 'Reading the theme first.', thought: true },
        { functionCall: { name: 'read_screen', args: { id: 'A' } }, thoughtSignature: 'SIG-A' },
        { functionCall: { name: 'read_screen', args: { id: 'B' } } },
      ],
    });
  });

  const call = () => ({ dispatcher: agent, baseUrl: server.url, apiKey: undefined, signal: new AbortController().signal, idleTimeoutMs: 5_000 });
  const failureOf = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e);

  it.each(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT'])('fails an answer stopped for %s as content_blocked, never retryable, naming the reason', async (reason) => {
    const lines = [
      { candidates: [{ content: { role: 'model', parts: [{ text: 'Here is the ' }] } }] },
      { candidates: [{ content: { role: 'model', parts: [] }, finishReason: reason }], usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 3 } },
    ].map((l) => JSON.stringify(l));
    server.serve(frameAsApi(lines, 'google'), []);
    const error = await failureOf(PROVIDER_STREAMS.google(request(), call()));
    expect(error).toMatchObject({ type: 'content_blocked', retryable: false });
    expect((error as Error).message).toContain(`the answer was stopped (${reason})`);
  });

  it('Anthropic: a redacted_thinking block is kept and sent back as it came, before the text', async () => {
    const lines = [
      { type: 'message_start', message: { usage: { input_tokens: 10, output_tokens: 1 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'redacted_thinking', data: 'ENCRYPTED==' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Done.' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } },
      { type: 'message_stop' },
    ].map((l) => JSON.stringify(l));
    server.serve(frameAsApi(lines, 'anthropic'), []);
    const m = await PROVIDER_STREAMS.anthropic(request(), call());
    expect(m).toMatchObject({ text: 'Done.', providerData: { provider: 'anthropic', thinking: [{ type: 'redacted_thinking', data: 'ENCRYPTED==' }] } });
    const body = anthropicRequestBody(request({ messages: [{ role: 'user', text: 'hi' }, { role: 'assistant', text: m.text, toolCalls: [], providerData: m.providerData! }, { role: 'user', text: 'and?' }] }));
    expect(body.messages[1]).toEqual({ role: 'assistant', content: [{ type: 'redacted_thinking', data: 'ENCRYPTED==' }, { type: 'text', text: 'Done.' }] });
  });

  it('OpenAI: a content_filter finish is a refusal', async () => {
    const lines = [
      { choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
      { choices: [{ index: 0, delta: {}, finish_reason: 'content_filter' }] },
    ].map((l) => JSON.stringify(l));
    server.serve(frameAsApi(lines, 'openai'), []);
    const m = await PROVIDER_STREAMS.openai(request(), { ...call(), baseUrl: `${server.url}/v1` });
    expect(m.stopReason).toBe('refusal');
  });
});

describe('the LLM call docs', () => {
  it('name every LLM failure type, and have a row for content_blocked and for the refusal stop reason', async () => {
    const readme = await readFile(path.join(import.meta.dirname, '..', 'docs', 'llm-calls.md'), 'utf8');
    for (const type of [...RETRYABLE_LLM_ERROR_TYPES, ...NON_RETRYABLE_LLM_ERROR_TYPES]) expect(readme, type).toContain(`\`${type}\``);
    expect(readme).toMatch(/^\| `content_blocked` \(failure type, never retried\) \|/m);
    expect(readme).toMatch(/^\| `refusal` \(stop reason of the answer\) \|/m);
  });
});
