import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LlmError } from '../activities/llm/llm-error';
import { anthropicRequestBody } from '../activities/llm/providers/anthropic';
import { geminiRequestBody } from '../activities/llm/providers/gemini';
import type { LlmErrorType } from '../contracts/errors';
import type { AssistantMessage, LlmRequest, Message, ProviderData, Usage } from '../contracts/messages';
import type { ProviderId } from '../contracts/model-ref';
import {
  FIXTURES_DIR,
  FIXTURES_MISSING,
  fixtureLines,
  fixturesPresent,
  frameAsApi,
  playCut,
  startFixtureServer,
  type FixtureServer,
  type SplitKind,
} from './support/fixture-stream-server';

/**
 * Every stream recorded from the real APIs, one row each: its adapter must turn it,
 * framed as the real API frames it and cut at awkward offsets, into exactly the row's
 * reply (text, tool calls in order with their parsed arguments, stop reason, final usage,
 * and the opaque data the next request must carry back) or fail with the row's type. A
 * file in the folder without a row fails the last test, so the table stays complete.
 */

/** A text too long to write out: its length and digest, and the parts a reader can check. */
interface LongText {
  length: number;
  sha256: string;
  startsWith?: string;
  endsWith?: string;
  contains?: string;
  lacks?: string;
}

interface Reply {
  text: string | LongText;
  toolCalls: AssistantMessage['toolCalls'];
  stopReason: AssistantMessage['stopReason'];
  responseModel: string;
  usage: Usage;
  /** What the next request must carry back; absent when the provider needs nothing. */
  providerData?: (signature: string) => ProviderData;
}

interface Row {
  fixture: string;
  provider: ProviderId;
  /** What this recording shows that a plain one does not. */
  shows: string;
  /** The signature the provider recorded: the payload line that carries it and its length (too long to write out). */
  signature?: { line: number; length: number };
  /** The adapter's message, or the failure it must leave with, or why the stream is not played. */
  outcome:
    | { reply: Reply; sentBack?: (signature: string) => unknown }
    | { fails: { type: LlmErrorType; retryable: boolean; says: string } }
    | { skipped: string };
}

const tokens = ({ input, output, reasoning = 0 }: { input: number; output: number; reasoning?: number }): Usage => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: reasoning,
});

const SUMMARIZED_THINKING =
  "I'm working through the Euclidean algorithm to find the GCD of 1071 and 462, applying successive division until I reach a remainder of zero, which gives me 21 as the greatest common divisor.";
const THREE_SEARCHES = [
  { id: 'toolu_01LtEf4h1QW7KCKLsYMuhTNB', name: 'searchDocs', input: { query: 'alpha' } },
  { id: 'toolu_016tfZE7otAFSBjhc67wu189', name: 'searchDocs', input: { query: 'beta' } },
  { id: 'toolu_01XkU35z8BVWqqc9tijDuLrA', name: 'searchDocs', input: { query: 'gamma' } },
];
const GEMINI_CALL_ID = expect.stringMatching(/^gemini_[0-9a-f]{12}_1$/) as string;
const STRAWBERRY = 'There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y';
const STRAWBERRY_BREAKDOWN = 'There are **3** "r"s in strawberry.\n\nHere is the breakdown: st**r**awbe**rr**y.';
// Vertex sends `partialArgs` only to a request that sets
// `toolConfig.functionCallingConfig.streamFunctionCallArguments`, which this project never does.
const VERTEX_PARTIAL_ARGS = 'a Vertex partialArgs stream, which only a streamFunctionCallArguments request gets';

const geminiToolCall = (thoughts: number): Row['outcome'] => ({
  reply: {
    text: '',
    toolCalls: [{ id: GEMINI_CALL_ID, name: 'weather', input: { location: 'San Francisco' } }],
    stopReason: 'tool_use',
    responseModel: 'gemini-3-pro-preview',
    usage: tokens({ input: 29, output: 15 + thoughts, reasoning: thoughts }),
    providerData: (signature) => ({ provider: 'google', parts: [{ type: 'call', index: 0, thoughtSignature: signature }] }),
  },
  sentBack: (signature) => ({ role: 'model', parts: [{ functionCall: { name: 'weather', args: { location: 'San Francisco' } }, thoughtSignature: signature }] }),
});

const ROWS: Row[] = [
  {
    fixture: 'anthropic-text.chunks.txt',
    provider: 'anthropic',
    shows: 'text, end_turn, and the usage of message_delta',
    outcome: {
      reply: {
        text: "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?",
        toolCalls: [],
        stopReason: 'end_turn',
        responseModel: 'claude-sonnet-4-5-20250929',
        usage: tokens({ input: 12, output: 30 }),
      },
    },
  },
  {
    fixture: 'duplicate-message-start.chunks.txt',
    provider: 'anthropic',
    shows: 'a repeated message_start changes nothing',
    outcome: {
      reply: { text: 'Hello, World!', toolCalls: [], stopReason: 'end_turn', responseModel: 'claude-3-haiku-20240307', usage: tokens({ input: 17, output: 227 }) },
    },
  },
  {
    fixture: 'anthropic-message-delta-input-tokens.chunks.txt',
    provider: 'anthropic',
    shows: 'the input count of message_delta wins over message_start',
    outcome: {
      reply: { text: 'pong', toolCalls: [], stopReason: 'end_turn', responseModel: 'claude-opus-4-5-20251101', usage: tokens({ input: 61, output: 2 }) },
    },
  },
  {
    fixture: 'anthropic-tool-no-args.chunks.txt',
    provider: 'anthropic',
    shows: 'text, pings around the block, a tool with no arguments at all is {} (not a parse error)',
    outcome: {
      reply: {
        text: "I'll update the issue list for you.",
        toolCalls: [{ id: 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP', name: 'updateIssueList', input: {} }],
        stopReason: 'tool_use',
        responseModel: 'claude-sonnet-4-5-20250929',
        usage: tokens({ input: 565, output: 48 }),
      },
    },
  },
  {
    fixture: 'anthropic-issue-11719-quoted-tool-input.chunks.txt',
    provider: 'anthropic',
    shows: 'a ping before the first delta, an empty first input_json_delta, escaped quotes, unknown `caller`',
    outcome: {
      reply: {
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
        usage: tokens({ input: 912, output: 118 }),
      },
    },
  },
  {
    fixture: 'anthropic-issue-15652-false.chunks.txt',
    provider: 'anthropic',
    shows: 'three parallel tool_use blocks in order, whitespace-padded payloads, `stop_details` tolerated',
    outcome: {
      reply: { text: '', toolCalls: THREE_SEARCHES, stopReason: 'tool_use', responseModel: 'claude-sonnet-4-5-20250929', usage: tokens({ input: 798, output: 110 }) },
    },
  },
  {
    fixture: 'anthropic-json-tool.1.chunks.txt',
    provider: 'anthropic',
    shows: 'a ping between the empty first delta and the arguments',
    outcome: {
      reply: {
        text: '',
        toolCalls: [
          { id: 'toolu_01KFbKqPYSuAKujiL6mTfzYA', name: 'json', input: { elements: [{ location: 'San Francisco', temperature: 58, condition: 'sunny' }] } },
        ],
        stopReason: 'tool_use',
        responseModel: 'claude-haiku-4-5-20251001',
        usage: tokens({ input: 849, output: 47 }),
      },
    },
  },
  {
    fixture: 'anthropic-claude-sonnet-5-reasoning-summarized.chunks.txt',
    provider: 'anthropic',
    shows: 'the thinking and its signature are kept apart from the answer, thinking tokens counted',
    signature: { line: 7, length: 436 },
    outcome: {
      reply: {
        text: {
          length: 539,
          sha256: 'efa2248983f0be275b6aea96b9cea99b5a908e0220411580a142fc9aad28b59a',
          startsWith: '# Finding GCD(1071, 462) Using the Euclidean Algorithm\n\n## Step 1: Divide 1071 by 462',
          endsWith: '- 1071 = 21 × 51 ✓\n- 462 = 21 × 22 ✓',
          lacks: 'Euclidean algorithm to find',
        },
        toolCalls: [],
        stopReason: 'end_turn',
        responseModel: 'claude-sonnet-5',
        usage: tokens({ input: 47, output: 373, reasoning: 62 }),
        providerData: (signature) => ({ provider: 'anthropic', thinking: [{ type: 'thinking', thinking: SUMMARIZED_THINKING, signature }] }),
      },
    },
  },
  {
    fixture: 'anthropic-claude-sonnet-5-reasoning-generic.chunks.txt',
    provider: 'anthropic',
    shows: 'a thinking block with no visible thinking still keeps its signature',
    signature: { line: 3, length: 436 },
    outcome: {
      reply: {
        text: { length: 890, sha256: '743d722b500ea724f26643c72a928902c646b8e33d9543f822c8f15a4003d9e7', endsWith: 'confirming the answer. ✅' },
        toolCalls: [],
        stopReason: 'end_turn',
        responseModel: 'claude-sonnet-5',
        usage: tokens({ input: 47, output: 496, reasoning: 62 }),
        providerData: (signature) => ({ provider: 'anthropic', thinking: [{ type: 'thinking', thinking: '', signature }] }),
      },
    },
  },
  {
    fixture: 'anthropic-spliced-thinking-then-tools.chunks.txt',
    provider: 'anthropic',
    shows: 'the next request sends the thinking block back unchanged, before the tool_use blocks',
    signature: { line: 7, length: 436 },
    outcome: {
      reply: {
        text: '',
        toolCalls: THREE_SEARCHES,
        stopReason: 'tool_use',
        responseModel: 'claude-sonnet-5',
        usage: tokens({ input: 798, output: 110 }),
        providerData: (signature) => ({ provider: 'anthropic', thinking: [{ type: 'thinking', thinking: SUMMARIZED_THINKING, signature }] }),
      },
      sentBack: (signature) => ({
        role: 'assistant',
        content: [{ type: 'thinking', thinking: SUMMARIZED_THINKING, signature }, ...THREE_SEARCHES.map((c) => ({ type: 'tool_use', ...c }))],
      }),
    },
  },
  {
    fixture: 'openai-text.chunks.txt',
    provider: 'openai',
    shows: 'usage: null on every chunk, "" role content, the final usage chunk with choices: []',
    outcome: {
      reply: {
        text: {
          length: 1724,
          sha256: '53b2d9e583d02b3ff0a0e83be5beb61ce1d16ccddc7ab9f033e72ec8ef55c8e4',
          startsWith: '**Holiday Name:** Harmony Day\n\n**Date:** Celebrated annually on the first Saturday of May',
        },
        toolCalls: [],
        stopReason: 'end_turn',
        responseModel: 'gpt-4.1-nano-2025-04-14',
        usage: tokens({ input: 16, output: 300 }),
      },
    },
  },
  {
    fixture: 'issue-15789-step-1.chunks.txt',
    provider: 'openai',
    shows: 'text and a tool call in one turn, arguments "{}" after an empty first piece',
    outcome: {
      reply: {
        text: 'PRE_TOOL',
        toolCalls: [{ id: 'call_NZa7xqfefoaMI2YYHowVXVlU', name: 'weather', input: {} }],
        stopReason: 'tool_use',
        responseModel: 'gpt-4o-2024-08-06',
        usage: tokens({ input: 58, output: 12 }),
      },
    },
  },
  {
    fixture: 'oai-parallel-tool-calls-f82268f2fefd.chunks.txt',
    provider: 'openai',
    shows: 'parallel tool calls told apart only by index, after role content null',
    outcome: {
      reply: {
        text: '',
        toolCalls: [
          { id: 'call_JMW1whyEaYG438VE1OIflxA2', name: 'GetWeatherArgs', input: { city: 'Edinburgh', country: 'GB', units: 'c' } },
          { id: 'call_DNYTawLBoN8fj3KN6qU9N1Ou', name: 'get_stock_price', input: { ticker: 'AAPL', exchange: 'NASDAQ' } },
        ],
        stopReason: 'tool_use',
        responseModel: 'gpt-4o-2024-08-06',
        usage: tokens({ input: 149, output: 60 }),
      },
    },
  },
  {
    fixture: 'oai-single-tool-call-c6aa7e397b71.chunks.txt',
    provider: 'openai',
    shows: 'a tool call arriving in the same delta as the role',
    outcome: {
      reply: {
        text: '',
        toolCalls: [{ id: 'call_c91SqDXlYFuETYv8mUHzz6pp', name: 'GetWeatherArgs', input: { city: 'Edinburgh', country: 'UK', units: 'c' } }],
        stopReason: 'tool_use',
        responseModel: 'gpt-4o-2024-08-06',
        usage: tokens({ input: 76, output: 24 }),
      },
    },
  },
  {
    fixture: 'oai-json-text-nonascii-d61558011839.chunks.txt',
    provider: 'openai',
    shows: 'non-ASCII text (°C) split inside its UTF-8 bytes',
    outcome: {
      reply: {
        text: { length: 608, sha256: 'fd5dc0f04c4dbdf7a7465109587b4676163ecab5bfb02c8ad7998d0d671656e5', contains: '"temperature": "18°C"' },
        toolCalls: [],
        stopReason: 'end_turn',
        responseModel: 'gpt-4o-2024-08-06',
        usage: tokens({ input: 19, output: 177 }),
      },
    },
  },
  {
    fixture: 'google-text.chunks.txt',
    provider: 'google',
    shows: 'the answer, and the signature on the closing empty text part kept as a part of its own',
    signature: { line: 2, length: 916 },
    outcome: {
      reply: {
        text: STRAWBERRY,
        toolCalls: [],
        stopReason: 'end_turn',
        responseModel: 'gemini-3-pro-preview',
        usage: tokens({ input: 9, output: 23 + 185, reasoning: 185 }),
        providerData: (signature) => ({ provider: 'google', parts: [{ type: 'text', chars: STRAWBERRY.length }, { type: 'text', chars: 0, thoughtSignature: signature }] }),
      },
      sentBack: (signature) => ({ role: 'model', parts: [{ text: STRAWBERRY }, { text: '', thoughtSignature: signature }] }),
    },
  },
  {
    fixture: 'google-reasoning.chunks.txt',
    provider: 'google',
    shows: 'thinking tokens counted as output and as reasoning, the closing signature sent back as it came',
    signature: { line: 2, length: 1216 },
    outcome: {
      reply: {
        text: STRAWBERRY_BREAKDOWN,
        toolCalls: [],
        stopReason: 'end_turn',
        responseModel: 'gemini-3-pro-preview',
        usage: tokens({ input: 9, output: 29 + 256, reasoning: 256 }),
        providerData: (signature) => ({
          provider: 'google',
          parts: [{ type: 'text', chars: STRAWBERRY_BREAKDOWN.length }, { type: 'text', chars: 0, thoughtSignature: signature }],
        }),
      },
      sentBack: (signature) => ({ role: 'model', parts: [{ text: STRAWBERRY_BREAKDOWN }, { text: '', thoughtSignature: signature }] }),
    },
  },
  {
    fixture: 'google-tool-call.chunks.txt',
    provider: 'google',
    shows: 'no call id, finishReason STOP on a tool turn, the thoughtSignature sent back on its functionCall byte for byte',
    signature: { line: 0, length: 396 },
    outcome: geminiToolCall(45),
  },
  {
    fixture: 'google-tool-call-gemini3.chunks.txt',
    provider: 'google',
    shows: 'no call id, finishReason STOP on a tool turn, the thoughtSignature sent back on its functionCall byte for byte',
    signature: { line: 0, length: 5488 },
    outcome: geminiToolCall(804),
  },
  {
    fixture: 'issue-19758-prompt-block.chunks.txt',
    provider: 'google',
    shows: 'a blocked prompt with no candidates fails as content_blocked, naming the reason',
    outcome: { fails: { type: 'content_blocked', retryable: false, says: 'PROHIBITED_CONTENT' } },
  },
  { fixture: 'google-stream-no-args-tool-call.chunks.txt', provider: 'google', shows: 'no-argument call', outcome: { skipped: VERTEX_PARTIAL_ARGS } },
  { fixture: 'google-stream-tool-call-arguments.chunks.txt', provider: 'google', shows: 'streamed arguments', outcome: { skipped: VERTEX_PARTIAL_ARGS } },
  {
    fixture: 'google-stream-tool-call-array-arguments-missing-terminal-function-call.chunks.txt',
    provider: 'google',
    shows: 'array arguments, no closing functionCall',
    outcome: { skipped: VERTEX_PARTIAL_ARGS },
  },
];

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

describe.skipIf(!fixturesPresent)('a stream recorded from a real API, through its adapter', () => {
  for (const row of ROWS) {
    const { outcome } = row;
    if ('skipped' in outcome) {
      it.skip(`${row.fixture} (${row.shows}; skipped: ${outcome.skipped})`, () => {});
      continue;
    }
    it(`${row.fixture}: ${row.shows}`, async () => {
      const signature = row.signature ? recordedSignature(row) : '';
      if ('fails' in outcome) {
        const error = await play(row).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(LlmError.is(error)).toBe(true);
        expect(error).toMatchObject({ type: outcome.fails.type, retryable: outcome.fails.retryable });
        expect((error as Error).message).toContain(outcome.fails.says);
        return;
      }
      const m = await play(row);
      const { text, providerData, ...rest } = outcome.reply;
      if (typeof text !== 'string') expectLongText(m.text, text);
      expect(m).toEqual({ role: 'assistant', text: typeof text === 'string' ? text : m.text, ...rest, ...(providerData ? { providerData: providerData(signature) } : {}) });
      if (outcome.sentBack) {
        const next = row.provider === 'anthropic' ? anthropicRequestBody(nextRequest(m)).messages[1] : geminiRequestBody(nextRequest(m)).contents[1];
        expect(next).toEqual(outcome.sentBack(signature));
        expect(JSON.stringify(next)).toContain(JSON.stringify(signature));
      }
    });
  }
});

/** The splits a body of this framing must have been cut at, whatever else it has. */
function requiredKinds(provider: ProviderId, body: Buffer): SplitKind[] {
  return [
    'inside data:',
    'mid-line',
    ...(body.some((b) => b >= 0x80) ? (['inside a UTF-8 character'] as const) : []),
    ...(provider === 'google' ? (['between CR and LF'] as const) : []),
  ];
}

async function play(row: Row): Promise<AssistantMessage> {
  const body = frameAsApi(fixtureLines(row.fixture), row.provider);
  const request: LlmRequest = { model: 'recorded', messages: [{ role: 'user', text: 'hi' }], tools: [], maxTokens: 1024 };
  const { message, splits } = await playCut(server, agent, row.provider, body, request);
  expect([...new Set(splits.values())].sort()).toEqual(expect.arrayContaining(requiredKinds(row.provider, body)));
  return message;
}

/** The row's signature as the provider recorded it: Anthropic's `signature_delta`, or the thoughtSignature on Gemini's first part. */
function recordedSignature(row: Row): string {
  const payload = JSON.parse(fixtureLines(row.fixture)[row.signature!.line]!) as {
    delta?: { signature: string };
    candidates?: { content: { parts: { thoughtSignature: string }[] } }[];
  };
  const signature = row.provider === 'anthropic' ? payload.delta!.signature : payload.candidates![0]!.content.parts[0]!.thoughtSignature;
  expect(signature).toHaveLength(row.signature!.length);
  return signature;
}

function expectLongText(actual: string, expected: LongText): void {
  expect(actual).toHaveLength(expected.length);
  expect(createHash('sha256').update(actual).digest('hex')).toBe(expected.sha256);
  if (expected.startsWith !== undefined) expect(actual.startsWith(expected.startsWith)).toBe(true);
  if (expected.endsWith !== undefined) expect(actual.endsWith(expected.endsWith)).toBe(true);
  if (expected.contains !== undefined) expect(actual).toContain(expected.contains);
  if (expected.lacks !== undefined) expect(actual).not.toContain(expected.lacks);
}

/** The follow-up request: the reply as the assistant turn, each call answered. */
function nextRequest(m: AssistantMessage): LlmRequest {
  const messages: Message[] = [
    { role: 'user', text: 'hi' },
    { role: 'assistant', text: m.text, toolCalls: m.toolCalls, ...(m.providerData ? { providerData: m.providerData } : {}) },
    ...m.toolCalls.map((c) => ({ role: 'tool' as const, toolCallId: c.id, name: c.name, code: 'ok' as const, content: 'done' })),
  ];
  return { model: 'recorded', messages, tools: [], maxTokens: 1024 };
}

// Without ../shared the folder cannot be read; the warning above says why everything skips.
describe.skipIf(!fixturesPresent)('the table of recorded streams', () => {
  it('has exactly one row for every stream in the fixture folder', () => {
    const inFolder = readdirSync(FIXTURES_DIR).filter((f) => f.endsWith('.chunks.txt'));
    const rows = ROWS.map((r) => r.fixture);
    expect(new Set(rows).size).toBe(rows.length);
    expect(inFolder.sort()).toEqual(rows.sort());
  });
});
