/**
 * Fuzzer of the provider-stream trust boundary: the bytes an LLM endpoint (or anything
 * between it and the worker) sends back, through the SSE parser and each provider's
 * adapter, over real local HTTP. Cases start from the streams recorded from the real APIs
 * (`../shared/real-streams/fixtures`, read where they are), whose JSON payloads are edited
 * (a field set to an awkward value) and whose bytes are then cut, corrupted (invalid UTF-8,
 * stray CR and LF, garbage), duplicated, deleted or joined by an oversize line, and served
 * split at arbitrary offsets; besides them, bytes that are no stream at all.
 *
 * Whatever arrives, an adapter gives a complete message (one that passes the message
 * schema the workflow records) or a typed `LlmError`: never an untyped throw, never a
 * hang, never a line read much past the parser's cap (the parser fails it as a retryable
 * `network_error` there, or the adapter had its answer before it).
 */
import { readdirSync } from 'node:fs';
import fc from 'fast-check';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LlmError } from '../../activities/llm/llm-error';
import { PROVIDER_STREAMS } from '../../activities/llm/providers';
import { SSE_MAX_LINE_BYTES } from '../../activities/llm/sse';
import { AssistantMessageSchema, type LlmRequest } from '../../contracts/messages';
import { OUTPUT_TOOL_NAME } from '../../contracts/structured-output';
import type { ProviderId } from '../../contracts/model-ref';
import { assertProperty, fuzzRun } from '../support/fuzz';
import { FIXTURES_DIR, FIXTURES_MISSING, fixtureLines, fixturesPresent, frameAsApi, startFixtureServer, type FixtureServer, type Framing } from '../support/fixture-stream-server';

if (!fixturesPresent) console.warn(FIXTURES_MISSING);

/** The framing each recorded stream came in, by the file-name prefixes the fixtures README uses. */
function framingOf(fixture: string): Framing {
  if (/^(anthropic-|duplicate-message-start)/.test(fixture)) return 'anthropic';
  if (/^(google-|issue-19758)/.test(fixture)) return 'google';
  if (/^(openai-|oai-|issue-15789)/.test(fixture)) return 'openai';
  throw new Error(`${fixture}: no framing known for this fixture; name it here`);
}

const FIXTURES = fixturesPresent ? readdirSync(FIXTURES_DIR).filter((f) => f.endsWith('.chunks.txt')) : [];
const PROVIDER_OF: Record<Framing, ProviderId> = { anthropic: 'anthropic', openai: 'openai', google: 'google' };

/**
 * One line 2 MiB past the parser's cap, built once: every case that inserts it shares it.
 * A parser that held it whole before judging it would read all of it; one that keeps its
 * cap stops within a chunk of the cap.
 */
const OVERSIZE_LINE = Buffer.concat([Buffer.from('data: '), Buffer.alloc(SSE_MAX_LINE_BYTES + 2 * 1024 * 1024, 'x'), Buffer.from('\n\n')]);
/** The most of one line a client may have read before it must have given up on it: the cap and a generous chunk. */
const READ_PAST_CAP = SSE_MAX_LINE_BYTES + 1024 * 1024;

/** The longest line (bytes between two line endings) in the first `read` bytes of `body`. */
function longestLineRead(body: Buffer, read: number): number {
  let longest = 0;
  let start = 0;
  for (let i = 0; i < Math.min(read, body.length); i++) {
    if (body[i] === 0x0a || body[i] === 0x0d) {
      longest = Math.max(longest, i - start);
      start = i + 1;
    }
  }
  return Math.max(longest, Math.min(read, body.length) - start);
}

/**
 * Values a field is set to: any JSON, plus the ones an adapter written against the happy
 * path trips on: names of Object.prototype's members (used as keys of a lookup table), an
 * object whose `toString` is not a function (`String()` of it throws), huge and negative
 * numbers, and wrong types where a string, a number or an array belongs.
 */
const awkwardValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom('constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', '', '[DONE]', 'error', 'message_stop', 'STOP', 'tool_use', 'SAFETY'),
  fc.constantFrom<unknown>({ toString: 1 }, { valueOf: 1, toString: 1 }, { __proto__: 1 }, [], {}, null, -1, 1e308, -1e308, 0.5, true),
);

/** A field of one payload set to a value: `line` and `field` pick among those the fixture has. */
const jsonEdit = fc.record({ line: fc.nat(), field: fc.nat(), value: awkwardValue });

type ByteEdit =
  | { kind: 'truncate'; at: number }
  | { kind: 'overwrite'; at: number; bytes: Uint8Array }
  | { kind: 'insert'; at: number; bytes: Uint8Array }
  | { kind: 'delete'; at: number; length: number }
  | { kind: 'duplicate'; at: number; length: number }
  | { kind: 'oversize'; at: number };

/** Bytes that break a stream in the ways wires do: invalid UTF-8, stray line endings, NULs, half a frame. */
const awkwardBytes: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.uint8Array({ minLength: 1, maxLength: 16 }),
  fc.constantFrom(
    ...['\r', '\n', '\r\n', '\n\n', '\r\r', 'data: ', 'data: {', 'event: error\n', ': ping\n\n', 'data: [DONE]\n\n', '\uFEFF', '\0'].map((s) => Buffer.from(s)),
    Buffer.from([0xff]),
    Buffer.from([0xc3]),
    Buffer.from([0xe2, 0x82]),
    Buffer.from([0xed, 0xa0, 0x80]),
    Buffer.from([0xf4, 0x90, 0x80, 0x80]),
  ),
);

const byteEdit: fc.Arbitrary<ByteEdit> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }) },
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('overwrite' as const), at: fc.nat(), bytes: awkwardBytes }) },
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), bytes: awkwardBytes }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 64 }) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('duplicate' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 400 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('oversize' as const), at: fc.nat() }) },
);

function applyByteEdit(body: Buffer, edit: ByteEdit): Buffer {
  const at = edit.at % (body.length + 1);
  switch (edit.kind) {
    case 'truncate':
      return body.subarray(0, at);
    case 'overwrite':
      return Buffer.concat([body.subarray(0, at), edit.bytes, body.subarray(at + edit.bytes.length)]);
    case 'insert':
      return Buffer.concat([body.subarray(0, at), edit.bytes, body.subarray(at)]);
    case 'delete':
      return Buffer.concat([body.subarray(0, at), body.subarray(at + edit.length)]);
    case 'duplicate':
      return Buffer.concat([body.subarray(0, at + edit.length), body.subarray(at)]);
    case 'oversize': {
      // At a line start, so it is one line of its own past the cap, not the tail of another.
      const lineStart = body.lastIndexOf(0x0a, at - 1) + 1;
      return Buffer.concat([body.subarray(0, lineStart), OVERSIZE_LINE, body.subarray(lineStart)]);
    }
  }
}

/** Every path to a value inside `root`, so an edit can pick one. */
function fieldPaths(root: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (typeof root !== 'object' || root === null) return out;
  for (const [key, value] of Object.entries(root)) {
    const path = [...prefix, Array.isArray(root) ? Number(key) : key];
    out.push(path);
    fieldPaths(value, path, out);
  }
  return out;
}

function applyJsonEdit(lines: string[], edit: { line: number; field: number; value: unknown }): string[] {
  const index = edit.line % lines.length;
  const payload: unknown = JSON.parse(lines[index]!);
  const paths = fieldPaths(payload);
  if (paths.length === 0) return lines;
  const path = paths[edit.field % paths.length]!;
  let parent = payload as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  // Defined as an own property, as JSON.parse would make it, even for `__proto__`.
  Object.defineProperty(parent, path[path.length - 1]!, { value: edit.value, enumerable: true, writable: true, configurable: true });
  return lines.map((line, i) => (i === index ? JSON.stringify(payload) : line));
}

/**
 * The edited payloads framed as the API frames them. Anthropic's `event:` names stay the
 * recorded ones: the adapter reads the payload's `type`, and an edit may have made that
 * anything at all.
 */
function framed(recorded: string[], edited: string[], framing: Framing): Buffer {
  if (framing !== 'anthropic') return frameAsApi(edited, framing);
  const names = recorded.map((line) => (JSON.parse(line) as { type: string }).type);
  return Buffer.from(edited.map((line, i) => `event: ${names[i]}\ndata: ${line}\n\n`).join(''), 'utf8');
}

let server: FixtureServer;
const agent = new Agent();

beforeAll(async () => {
  server = await startFixtureServer();
});
afterAll(async () => {
  await server?.close();
  await agent.close();
});

const REQUEST: LlmRequest = { model: 'fuzzed', messages: [{ role: 'user', text: 'hi' }], tools: [], maxTokens: 1024 };
/** The same under an output schema: Anthropic then reads a `final_answer` call as the answer's text. */
const STRUCTURED: LlmRequest = { ...REQUEST, output: { schema: { type: 'object' } } };

/** How long a case may take before it counts as a hang: generous for a busy 2-core machine, far below any test timeout. */
const HANG_MS = 15_000;

/** Each case is an HTTP exchange: a long run (`FUZZ_RUNS`) gets this much per case instead of the default timeout. */
const timeoutFor = (ciRuns: number) => Math.max(60_000, fuzzRun(ciRuns).numRuns * 150);

/** What the adapter gave, and how many bytes of the body it had read by then. */
type Outcome = ({ message: unknown } | { error: unknown }) & { read: number };

/** `body` served in the pieces `splits` cut, through `provider`'s adapter. */
async function play(provider: ProviderId, body: Buffer, splits: number[], request = REQUEST): Promise<Outcome> {
  let read = 0;
  server.serve(
    body,
    splits.map((s) => s % (body.length + 1)),
  );
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hung: no outcome after ${HANG_MS} ms`)), HANG_MS);
  });
  const call = PROVIDER_STREAMS[provider](request, {
    dispatcher: agent,
    baseUrl: provider === 'openai' ? `${server.url}/v1` : server.url,
    apiKey: undefined,
    signal: new AbortController().signal,
    idleTimeoutMs: 5_000,
    onProgress: (p) => {
      read = p.bytes;
      server.barrier.read(p.bytes);
    },
  }).then(
    (message): Outcome => ({ message, read }),
    (error: unknown): Outcome => ({ error, read }),
  );
  try {
    return await Promise.race([call, hang]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The promise of the boundary, for one case: a complete message or a typed LlmError, and
 * no line read much past the cap (a line past it is given up on within a chunk of it).
 */
function checkOutcome(outcome: Outcome, body: Buffer): void {
  if (outcome.read > READ_PAST_CAP) {
    const longest = longestLineRead(body, outcome.read);
    if (longest > READ_PAST_CAP) throw new Error(`read ${longest} bytes of one line, past the cap of ${SSE_MAX_LINE_BYTES}`);
  }
  if ('message' in outcome) {
    const parsed = AssistantMessageSchema.safeParse(outcome.message);
    if (!parsed.success) throw new Error(`an incomplete message passed for a complete one: ${parsed.error.message}`);
    return;
  }
  const { error } = outcome;
  if (!LlmError.is(error)) throw new Error(`an untyped throw: ${error instanceof Error ? `${error.name}: ${error.message}\n${error.stack}` : String(error)}`);
}

describe.skipIf(!fixturesPresent)('every recorded stream, edited, corrupted and split at random', () => {
  const ciRuns = 100;
  it('gives a complete message or a typed LlmError, never an untyped throw or a hang', { timeout: timeoutFor(ciRuns) }, async () => {
    await assertProperty(
      ciRuns,
      fc.asyncProperty(
        fc.constantFrom(...FIXTURES),
        fc.array(jsonEdit, { maxLength: 3 }),
        fc.array(byteEdit, { maxLength: 4 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.boolean(),
        async (fixture, jsonEdits, byteEdits, splits, structured) => {
          const framing = framingOf(fixture);
          // Under a schema the JSON-mode recording (its forced tool named `json`) answers as the adapter's own answer tool.
          const recorded = fixtureLines(fixture).map((line) => (structured ? line.replace('"name":"json"', `"name":"${OUTPUT_TOOL_NAME}"`) : line));
          const body = byteEdits.reduce(applyByteEdit, framed(recorded, jsonEdits.reduce(applyJsonEdit, recorded), framing));
          checkOutcome(await play(PROVIDER_OF[framing], body, splits, structured ? STRUCTURED : REQUEST), body);
        },
      ),
    );
  });
});

describe('bytes that are no event stream at all', () => {
  const ciRuns = 60;
  it('give each adapter a typed LlmError, never an untyped throw or a hang', { timeout: timeoutFor(ciRuns) }, async () => {
    await assertProperty(
      ciRuns,
      fc.asyncProperty(
        fc.constantFrom<ProviderId>('anthropic', 'openai', 'google'),
        fc.oneof(fc.uint8Array({ maxLength: 2048 }), fc.string({ maxLength: 512 }).map((s) => new TextEncoder().encode(`data: ${s}\n\n`))),
        fc.array(fc.nat(), { maxLength: 4 }),
        async (provider, bytes, splits) => {
          const body = Buffer.from(bytes);
          const outcome = await play(provider, body, splits);
          checkOutcome(outcome, body);
          // No terminal sentinel in random bytes (short of a miracle): it can not pass for an answer.
          expect('error' in outcome).toBe(true);
        },
      ),
    );
  });
});

/**
 * What the fuzzer found, each as the smallest stream that shows it: answers that passed
 * for complete but could not be recorded (the message schema refuses them, so a session
 * carrying one broke at its next continue-as-new), and an untyped throw.
 */
describe('the streams the fuzzer found', () => {
  const anthropic = (...events: object[]) => frameAsApi(events.map((e) => JSON.stringify(e)), 'anthropic');
  const openai = (...chunks: object[]) => frameAsApi(chunks.map((c) => JSON.stringify(c)), 'openai');
  const gemini = (...chunks: object[]) => frameAsApi(chunks.map((c) => JSON.stringify(c)), 'google');
  const start = { type: 'message_start', message: { model: 'claude-x', usage: { input_tokens: 1, output_tokens: 1 } } };
  const stop = { type: 'message_stop' };
  const outcomeOf = async (provider: ProviderId, body: Buffer) => {
    const outcome = await play(provider, body, []);
    checkOutcome(outcome, body);
    return outcome;
  };

  it.each([
    ['anthropic', anthropic(start, { type: 'message_delta', delta: { stop_reason: 'constructor' }, usage: { output_tokens: 2 } }, stop)],
    ['openai', openai({ model: 'gpt-x', choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: 'toString' }] })],
    ['google', gemini({ candidates: [{ content: { parts: [{ text: 'hi' }] }, finishReason: 'constructor' }] })],
  ] as const)('%s: a stop reason named like a member of every object ("constructor") is "other", not that member', async (provider, body) => {
    expect(await outcomeOf(provider, body)).toMatchObject({ message: { stopReason: 'other' } });
  });

  it.each([
    ['anthropic without a name', 'anthropic', anthropic(start, { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', input: {} } }, stop)],
    ['anthropic without an id', 'anthropic', anthropic(start, { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', name: 'calculator', input: {} } }, stop)],
    ['anthropic with a name that is no string', 'anthropic', anthropic(start, { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: { toString: 1 }, input: {} } }, stop)],
    ['openai without a name', 'openai', openai({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_1', function: { arguments: '{}' } }] }, finish_reason: 'tool_calls' }] })],
    ['google without a name', 'google', gemini({ candidates: [{ content: { parts: [{ functionCall: { args: {} } }] }, finishReason: 'STOP' }] })],
    ['google with a name that is no string', 'google', gemini({ candidates: [{ content: { parts: [{ functionCall: { name: { toString: 1 }, args: {} } }] }, finishReason: 'STOP' }] })],
  ] as const)('a tool call %s fails the stream as a retryable network_error, never as an answer or an untyped throw', async (_, provider, body) => {
    const outcome = await outcomeOf(provider, body);
    expect(outcome).toMatchObject({ error: { type: 'network_error', retryable: true } });
    expect((outcome as { error: Error }).error.message).toContain('tool call');
  });
});

describe('a field of the wrong type', () => {
  const anthropic = (...events: object[]) => frameAsApi(events.map((e) => JSON.stringify(e)), 'anthropic');
  const openai = (...chunks: object[]) => frameAsApi(chunks.map((c) => JSON.stringify(c)), 'openai');
  const gemini = (...chunks: object[]) => frameAsApi(chunks.map((c) => JSON.stringify(c)), 'google');

  it.each([
    [
      'anthropic',
      anthropic(
        { type: 'message_start', message: { model: 'claude-x', usage: 'many' } },
        { type: 'content_block_start', index: 'first', content_block: { type: 'text', text: 7 } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hi' } },
        { type: 'message_delta', delta: [], usage: { output_tokens: 'two', input_tokens: 3 } },
        { type: 'message_stop' },
      ),
    ],
    ['openai', openai({ model: 'gpt-x', usage: 'none', choices: [5, { index: 0, delta: { content: 'hi', refusal: 5, tool_calls: {} }, finish_reason: 'stop' }] })],
    ['google', gemini({ modelVersion: 'gemini-x', usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 'one' }, candidates: [{ content: { parts: [5, { text: 'hi', thoughtSignature: 9 }] }, finishReason: 'STOP' }] })],
  ] as const)('%s: reads as a field that is absent, and the rest of its chunk still counts', async (provider, body) => {
    const outcome = await play(provider, body, []);
    checkOutcome(outcome, body);
    expect(outcome).toMatchObject({ message: { text: 'hi', stopReason: 'end_turn', responseModel: expect.stringMatching(/-x$/), usage: { inputTokens: provider === 'openai' ? 0 : 3 } } });
  });
});
