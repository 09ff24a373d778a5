import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LlmError } from '../activities/llm/llm-error';
import { PROVIDER_STREAMS } from '../activities/llm/providers';
import { anthropicRequestBody } from '../activities/llm/providers/anthropic';
import { geminiRequestBody } from '../activities/llm/providers/gemini';
import type { AssistantMessage, LlmRequest, Message } from '../contracts/messages';
import type { ProviderId } from '../contracts/model-ref';
import {
  awkwardSplits,
  FIXTURES_DIR,
  FIXTURES_MISSING,
  fixtureLines,
  fixturesPresent,
  frameAsApi,
  startFixtureServer,
  type FixtureServer,
  type Framing,
  type SplitKind,
} from './support/fixture-stream-server';

/**
 * Every stream recorded from the real APIs goes through its adapter, framed as the real
 * API frames it and cut at awkward offsets, and the resulting message is asserted exactly:
 * text, tool calls in order with their parsed arguments, stop reason, final usage, and the
 * opaque data the next request must carry back.
 */

if (!fixturesPresent) console.warn(FIXTURES_MISSING);

let server: FixtureServer;
const agent = new Agent();

beforeAll(async () => {
  if (fixturesPresent) server = await startFixtureServer();
});
afterAll(async () => {
  await server?.close();
  await agent.close();
});

const PROVIDER_OF: Record<Framing, ProviderId> = { anthropic: 'anthropic', openai: 'openai', google: 'google' };

/** The splits a body of this framing must have been cut at, whatever else it has. */
function requiredKinds(framing: Framing, body: Buffer): SplitKind[] {
  return [
    'inside data:',
    'mid-line',
    ...(body.some((b) => b >= 0x80) ? (['inside a UTF-8 character'] as const) : []),
    ...(framing === 'google' ? (['between CR and LF'] as const) : []),
  ];
}

/** Every fixture a test below plays (or skips, saying why); a new file in the folder fails the guard until one does. */
const played = new Set<string>();

async function play(fixture: string, framing: Framing): Promise<AssistantMessage> {
  played.add(fixture);
  const body = frameAsApi(fixtureLines(fixture), framing);
  const splits = awkwardSplits(body);
  expect([...new Set(splits.values())].sort()).toEqual(expect.arrayContaining(requiredKinds(framing, body)));
  server.serve(body, splits.keys());
  const request: LlmRequest = { model: 'recorded', messages: [{ role: 'user', text: 'hi' }], tools: [], maxTokens: 1024 };
  const message = await PROVIDER_STREAMS[PROVIDER_OF[framing]](request, {
    dispatcher: agent,
    baseUrl: framing === 'openai' ? `${server.url}/v1` : server.url,
    apiKey: undefined,
    signal: new AbortController().signal,
    idleTimeoutMs: 5_000,
    onProgress: (p) => server.barrier.read(p.bytes),
  });
  // Each cut reached the parser as a cut: the client's running byte count stopped there.
  for (const at of splits.keys()) expect(server.barrier.totals).toContain(at);
  return message;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A field of one recorded payload, for values too long to write out (signatures). */
function recorded(fixture: string, line: number, path: (v: never) => unknown): string {
  return path(JSON.parse(fixtureLines(fixture)[line]!) as never) as string;
}

const VERTEX_PARTIAL_ARGS = [
  'google-stream-no-args-tool-call.chunks.txt',
  'google-stream-tool-call-arguments.chunks.txt',
  'google-stream-tool-call-array-arguments-missing-terminal-function-call.chunks.txt',
];

describe.skipIf(!fixturesPresent)('recorded Anthropic streams through the Anthropic adapter', () => {
  it('anthropic-text: text, end_turn, and the usage of message_delta', async () => {
    const m = await play('anthropic-text.chunks.txt', 'anthropic');
    expect(m.responseModel).toBe('claude-sonnet-4-5-20250929');
    expect(m.text).toBe("Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?");
    expect(m).toMatchObject({ toolCalls: [], stopReason: 'end_turn' });
    expect(m.usage).toEqual({ inputTokens: 12, outputTokens: 30, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 });
    expect(m.providerData).toBeUndefined();
  });

  it('duplicate-message-start: a repeated message_start changes nothing', async () => {
    const m = await play('duplicate-message-start.chunks.txt', 'anthropic');
    expect(m).toEqual({
      role: 'assistant',
      text: 'Hello, World!',
      toolCalls: [],
      stopReason: 'end_turn',
      responseModel: 'claude-3-haiku-20240307',
      usage: { inputTokens: 17, outputTokens: 227, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
    });
  });

  it('message-delta-input-tokens: the input count of message_delta wins over message_start', async () => {
    const m = await play('anthropic-message-delta-input-tokens.chunks.txt', 'anthropic');
    expect(m).toEqual({
      role: 'assistant',
      text: 'pong',
      toolCalls: [],
      stopReason: 'end_turn',
      responseModel: 'claude-opus-4-5-20251101',
      usage: { inputTokens: 61, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
    });
  });

  it('tool-no-args: text, pings around the block, a tool with no arguments at all is {} (not a parse error)', async () => {
    const m = await play('anthropic-tool-no-args.chunks.txt', 'anthropic');
    expect(m).toEqual({
      role: 'assistant',
      text: "I'll update the issue list for you.",
      toolCalls: [{ id: 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP', name: 'updateIssueList', input: {} }],
      stopReason: 'tool_use',
      responseModel: 'claude-sonnet-4-5-20250929',
      usage: { inputTokens: 565, outputTokens: 48, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
    });
  });

  it('issue-11719: a ping before the first delta, an empty first input_json_delta, escaped quotes, unknown `caller`', async () => {
    const m = await play('anthropic-issue-11719-quoted-tool-input.chunks.txt', 'anthropic');
    expect(m.responseModel).toBe('claude-sonnet-4-5-20250929');
    expect(m).toEqual({
      role: 'assistant',
      text: '',
      toolCalls: [
        {
          id: 'toolu_01Cr31vcGoeeRgi3Eo5Ds8qN',
          name: 'website_update',
          input: {
            website_path: '/home/user/pace-landing',
            tasks: [
              {
                description:
                  'Today you post every run to Strava, but Strava does not answer the question: "What should I do next after this run?". It is a great log, but it is not adaptive.',
                type: 'feature',
                passes: false,
              },
            ],
          },
        },
      ],
      stopReason: 'tool_use',
      responseModel: 'claude-sonnet-4-5-20250929',
      usage: { inputTokens: 912, outputTokens: 118, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
    });
  });

  it('issue-15652: three parallel tool_use blocks in order, whitespace-padded payloads, `stop_details` tolerated', async () => {
    const m = await play('anthropic-issue-15652-false.chunks.txt', 'anthropic');
    expect(m).toEqual({
      role: 'assistant',
      text: '',
      toolCalls: [
        { id: 'toolu_01LtEf4h1QW7KCKLsYMuhTNB', name: 'searchDocs', input: { query: 'alpha' } },
        { id: 'toolu_016tfZE7otAFSBjhc67wu189', name: 'searchDocs', input: { query: 'beta' } },
        { id: 'toolu_01XkU35z8BVWqqc9tijDuLrA', name: 'searchDocs', input: { query: 'gamma' } },
      ],
      stopReason: 'tool_use',
      responseModel: 'claude-sonnet-4-5-20250929',
      usage: { inputTokens: 798, outputTokens: 110, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
    });
  });

  it('json-tool: a ping between the empty first delta and the arguments', async () => {
    const m = await play('anthropic-json-tool.1.chunks.txt', 'anthropic');
    expect(m).toEqual({
      role: 'assistant',
      text: '',
      toolCalls: [
        { id: 'toolu_01KFbKqPYSuAKujiL6mTfzYA', name: 'json', input: { elements: [{ location: 'San Francisco', temperature: 58, condition: 'sunny' }] } },
      ],
      stopReason: 'tool_use',
      responseModel: 'claude-haiku-4-5-20251001',
      usage: { inputTokens: 849, outputTokens: 47, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
    });
  });

  it('reasoning-summarized: the thinking and its signature are kept apart from the answer, thinking tokens counted', async () => {
    const fixture = 'anthropic-claude-sonnet-5-reasoning-summarized.chunks.txt';
    const m = await play(fixture, 'anthropic');
    expect(m.responseModel).toBe('claude-sonnet-5');
    expect(m.text).toHaveLength(539);
    expect(sha256(m.text)).toBe('efa2248983f0be275b6aea96b9cea99b5a908e0220411580a142fc9aad28b59a');
    expect(m.text.startsWith('# Finding GCD(1071, 462) Using the Euclidean Algorithm\n\n## Step 1: Divide 1071 by 462')).toBe(true);
    expect(m.text.endsWith('- 1071 = 21 × 51 ✓\n- 462 = 21 × 22 ✓')).toBe(true);
    expect(m.text).not.toContain('Euclidean algorithm to find');
    expect(m).toMatchObject({ toolCalls: [], stopReason: 'end_turn' });
    expect(m.usage).toEqual({ inputTokens: 47, outputTokens: 373, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 62 });
    const signature = recorded(fixture, 7, (v: { delta: { signature: string } }) => v.delta.signature);
    expect(signature).toHaveLength(436);
    expect(m.providerData).toEqual({
      provider: 'anthropic',
      thinking: [
        {
          type: 'thinking',
          thinking:
            "I'm working through the Euclidean algorithm to find the GCD of 1071 and 462, applying successive division until I reach a remainder of zero, which gives me 21 as the greatest common divisor.",
          signature,
        },
      ],
    });
  });

  it('reasoning-generic: a thinking block with no visible thinking still keeps its signature', async () => {
    const fixture = 'anthropic-claude-sonnet-5-reasoning-generic.chunks.txt';
    const m = await play(fixture, 'anthropic');
    expect(m.responseModel).toBe('claude-sonnet-5');
    expect(m.text).toHaveLength(890);
    expect(sha256(m.text)).toBe('743d722b500ea724f26643c72a928902c646b8e33d9543f822c8f15a4003d9e7');
    expect(m.text.endsWith('confirming the answer. ✅')).toBe(true);
    expect(m.usage).toEqual({ inputTokens: 47, outputTokens: 496, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 62 });
    const signature = recorded(fixture, 3, (v: { delta: { signature: string } }) => v.delta.signature);
    expect(m.providerData).toEqual({ provider: 'anthropic', thinking: [{ type: 'thinking', thinking: '', signature }] });
  });

  it('spliced thinking then tools: the next request sends the thinking block back unchanged, before the tool_use blocks', async () => {
    const fixture = 'anthropic-spliced-thinking-then-tools.chunks.txt';
    const m = await play(fixture, 'anthropic');
    expect(m.responseModel).toBe('claude-sonnet-5');
    expect(m.toolCalls.map((c) => [c.id, c.input])).toEqual([
      ['toolu_01LtEf4h1QW7KCKLsYMuhTNB', { query: 'alpha' }],
      ['toolu_016tfZE7otAFSBjhc67wu189', { query: 'beta' }],
      ['toolu_01XkU35z8BVWqqc9tijDuLrA', { query: 'gamma' }],
    ]);
    expect(m).toMatchObject({ text: '', stopReason: 'tool_use' });
    expect(m.usage).toEqual({ inputTokens: 798, outputTokens: 110, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 });
    const signature = recorded(fixture, 7, (v: { delta: { signature: string } }) => v.delta.signature);

    const next = anthropicRequestBody(nextRequest(m));
    const assistant = next.messages[1]!;
    expect(assistant.content.map((b) => b.type)).toEqual(['thinking', 'tool_use', 'tool_use', 'tool_use']);
    expect(assistant.content[0]).toEqual({ type: 'thinking', thinking: expect.stringMatching(/^I'm working through/), signature });
    expect(JSON.stringify(next)).toContain(`"signature":${JSON.stringify(signature)}`);
  });
});

describe.skipIf(!fixturesPresent)('recorded OpenAI streams through the OpenAI adapter', () => {
  it('openai-text: usage: null on every chunk, "" role content, the final usage chunk with choices: []', async () => {
    const m = await play('openai-text.chunks.txt', 'openai');
    expect(m.responseModel).toBe('gpt-4.1-nano-2025-04-14');
    expect(m.text).toHaveLength(1724);
    expect(sha256(m.text)).toBe('53b2d9e583d02b3ff0a0e83be5beb61ce1d16ccddc7ab9f033e72ec8ef55c8e4');
    expect(m.text.startsWith('**Holiday Name:** Harmony Day\n\n**Date:** Celebrated annually on the first Saturday of May')).toBe(true);
    expect(m).toMatchObject({ toolCalls: [], stopReason: 'end_turn' });
    expect(m.usage).toEqual({ inputTokens: 16, outputTokens: 300, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 });
    expect(m.providerData).toBeUndefined();
  });

  it('issue-15789: text and a tool call in one turn, arguments "{}" after an empty first piece', async () => {
    const m = await play('issue-15789-step-1.chunks.txt', 'openai');
    expect(m).toEqual({
      role: 'assistant',
      text: 'PRE_TOOL',
      toolCalls: [{ id: 'call_NZa7xqfefoaMI2YYHowVXVlU', name: 'weather', input: {} }],
      stopReason: 'tool_use',
      responseModel: 'gpt-4o-2024-08-06',
      usage: { inputTokens: 58, outputTokens: 12, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
    });
  });

  it('parallel tool calls told apart only by index, after role content null', async () => {
    const m = await play('oai-parallel-tool-calls-f82268f2fefd.chunks.txt', 'openai');
    expect(m).toEqual({
      role: 'assistant',
      text: '',
      toolCalls: [
        { id: 'call_JMW1whyEaYG438VE1OIflxA2', name: 'GetWeatherArgs', input: { city: 'Edinburgh', country: 'GB', units: 'c' } },
        { id: 'call_DNYTawLBoN8fj3KN6qU9N1Ou', name: 'get_stock_price', input: { ticker: 'AAPL', exchange: 'NASDAQ' } },
      ],
      stopReason: 'tool_use',
      responseModel: 'gpt-4o-2024-08-06',
      usage: { inputTokens: 149, outputTokens: 60, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
    });
  });

  it('a tool call arriving in the same delta as the role', async () => {
    const m = await play('oai-single-tool-call-c6aa7e397b71.chunks.txt', 'openai');
    expect(m).toEqual({
      role: 'assistant',
      text: '',
      toolCalls: [{ id: 'call_c91SqDXlYFuETYv8mUHzz6pp', name: 'GetWeatherArgs', input: { city: 'Edinburgh', country: 'UK', units: 'c' } }],
      stopReason: 'tool_use',
      responseModel: 'gpt-4o-2024-08-06',
      usage: { inputTokens: 76, outputTokens: 24, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
    });
  });

  it('non-ASCII text (°C) split inside its UTF-8 bytes', async () => {
    const m = await play('oai-json-text-nonascii-d61558011839.chunks.txt', 'openai');
    expect(m.responseModel).toBe('gpt-4o-2024-08-06');
    expect(m.text).toHaveLength(608);
    expect(sha256(m.text)).toBe('fd5dc0f04c4dbdf7a7465109587b4676163ecab5bfb02c8ad7998d0d671656e5');
    expect(m.text).toContain('"temperature": "18°C"');
    expect(m).toMatchObject({ toolCalls: [], stopReason: 'end_turn' });
    expect(m.usage).toEqual({ inputTokens: 19, outputTokens: 177, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 });
    // OpenAI asks nothing back: no provider data rides on the message.
    expect(m.providerData).toBeUndefined();
  });
});

describe.skipIf(!fixturesPresent)('recorded Gemini streams through the Gemini adapter', () => {
  const geminiId = expect.stringMatching(/^gemini_[0-9a-f]{12}_1$/);

  it('google-text: the answer, and the signature on the closing empty text part kept as a part of its own', async () => {
    const fixture = 'google-text.chunks.txt';
    const m = await play(fixture, 'google');
    const text = 'There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y';
    const signature = recorded(fixture, 2, (v: { candidates: { content: { parts: { thoughtSignature: string }[] } }[] }) => v.candidates[0]!.content.parts[0]!.thoughtSignature);
    expect(m).toEqual({
      role: 'assistant',
      text,
      toolCalls: [],
      stopReason: 'end_turn',
      responseModel: 'gemini-3-pro-preview',
      usage: { inputTokens: 9, outputTokens: 23 + 185, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 185 },
      providerData: { provider: 'google', parts: [{ type: 'text', chars: text.length }, { type: 'text', chars: 0, thoughtSignature: signature }] },
    });
    expect(geminiRequestBody(nextRequest(m)).contents[1]).toEqual({ role: 'model', parts: [{ text }, { text: '', thoughtSignature: signature }] });
  });

  it('google-reasoning: thinking tokens counted as output and as reasoning, the closing signature sent back as it came', async () => {
    const fixture = 'google-reasoning.chunks.txt';
    const m = await play(fixture, 'google');
    expect(m.responseModel).toBe('gemini-3-pro-preview');
    const text = 'There are **3** "r"s in strawberry.\n\nHere is the breakdown: st**r**awbe**rr**y.';
    const signature = recorded(fixture, 2, (v: { candidates: { content: { parts: { thoughtSignature: string }[] } }[] }) => v.candidates[0]!.content.parts[0]!.thoughtSignature);
    expect(m.text).toBe(text);
    expect(m.usage).toEqual({ inputTokens: 9, outputTokens: 29 + 256, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 256 });
    expect(m.providerData).toEqual({ provider: 'google', parts: [{ type: 'text', chars: text.length }, { type: 'text', chars: 0, thoughtSignature: signature }] });
    expect(geminiRequestBody(nextRequest(m)).contents[1]).toEqual({ role: 'model', parts: [{ text }, { text: '', thoughtSignature: signature }] });
  });

  it.each(['google-tool-call.chunks.txt', 'google-tool-call-gemini3.chunks.txt'])(
    '%s: no call id, finishReason STOP on a tool turn, the thoughtSignature sent back on its functionCall byte for byte',
    async (fixture) => {
      const m = await play(fixture, 'google');
      const signature = recorded(fixture, 0, (v: { candidates: { content: { parts: { thoughtSignature: string }[] } }[] }) => v.candidates[0]!.content.parts[0]!.thoughtSignature);
      expect(signature).toHaveLength(fixture === 'google-tool-call.chunks.txt' ? 396 : 5488);
      const thoughts = fixture === 'google-tool-call.chunks.txt' ? 45 : 804;
      expect(m).toEqual({
        role: 'assistant',
        text: '',
        toolCalls: [{ id: geminiId, name: 'weather', input: { location: 'San Francisco' } }],
        stopReason: 'tool_use',
        responseModel: 'gemini-3-pro-preview',
        usage: { inputTokens: 29, outputTokens: 15 + thoughts, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: thoughts },
        providerData: { provider: 'google', parts: [{ type: 'call', index: 0, thoughtSignature: signature }] },
      });
      const next = geminiRequestBody(nextRequest(m));
      expect(next.contents[1]).toEqual({ role: 'model', parts: [{ functionCall: { name: 'weather', args: { location: 'San Francisco' } }, thoughtSignature: signature }] });
      expect(JSON.stringify(next)).toContain(`"thoughtSignature":${JSON.stringify(signature)}`);
    },
  );

  it('issue-19758: a blocked prompt with no candidates fails as content_blocked, naming the reason', async () => {
    const error = await play('issue-19758-prompt-block.chunks.txt', 'google').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(LlmError.is(error)).toBe(true);
    expect(error).toMatchObject({ type: 'content_blocked', retryable: false });
    expect((error as Error).message).toContain('PROHIBITED_CONTENT');
  });

  // Vertex sends `partialArgs` only to a request that sets
  // `toolConfig.functionCallingConfig.streamFunctionCallArguments`, which this project never does.
  it.skip.each(VERTEX_PARTIAL_ARGS)('%s (skipped: a Vertex partialArgs stream, which only a streamFunctionCallArguments request gets)', () => {});
});

/** The follow-up request: the reply as the assistant turn, each call answered. */
function nextRequest(m: AssistantMessage): LlmRequest {
  const messages: Message[] = [
    { role: 'user', text: 'hi' },
    { role: 'assistant', text: m.text, toolCalls: m.toolCalls, ...(m.providerData ? { providerData: m.providerData } : {}) },
    ...m.toolCalls.map((c) => ({ role: 'tool' as const, toolCallId: c.id, name: c.name, code: 'ok' as const, content: 'done' })),
  ];
  return { model: 'recorded', messages, tools: [], maxTokens: 1024 };
}

// Declared last, so it runs after every stream above has been played.
describe.skipIf(!fixturesPresent)('the fixture folder', () => {
  it('has no stream that no test plays or skips with a reason', () => {
    const all = readdirSync(FIXTURES_DIR).filter((f) => f.endsWith('.chunks.txt'));
    expect(all.length).toBeGreaterThanOrEqual(22);
    expect(all.filter((f) => !played.has(f) && !VERTEX_PARTIAL_ARGS.includes(f))).toEqual([]);
  });
});
