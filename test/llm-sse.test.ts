import { describe, expect, it } from 'vitest';
import { LlmError } from '../activities/llm/llm-error';
import { parseSse, SSE_MAX_EVENT_BYTES, SSE_MAX_LINE_BYTES, type SseEvent } from '../activities/llm/sse';

const enc = new TextEncoder();
const ORIGIN = { provider: 'anthropic', endpoint: 'POST /v1/messages' };
const MiB = 1024 * 1024;

async function* chunked(parts: (string | Uint8Array)[]): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield typeof p === 'string' ? enc.encode(p) : p;
}

async function parse(parts: (string | Uint8Array)[]): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const ev of parseSse(chunked(parts), ORIGIN)) out.push(ev);
  return out;
}

/** Every way of cutting `text` into single bytes. */
function bytewise(text: string): Uint8Array[] {
  return [...enc.encode(text)].map((b) => Uint8Array.of(b));
}

describe('parseSse', () => {
  it('reads named events', async () => {
    expect(await parse(['event: message_start\ndata: {"a":1}\n\n'])).toEqual([{ event: 'message_start', data: '{"a":1}' }]);
  });

  it("names an event without an event: field 'message'", async () => {
    expect(await parse(['data: hi\n\n'])).toEqual([{ event: 'message', data: 'hi' }]);
  });

  it('joins several data: lines with a newline', async () => {
    expect(await parse(['data: one\ndata: two\ndata:\ndata: four\n\n'])).toEqual([{ event: 'message', data: 'one\ntwo\n\nfour' }]);
  });

  it('strips exactly one space after the colon', async () => {
    expect(await parse(['data:no-space\n\ndata:  two\n\n'])).toEqual([
      { event: 'message', data: 'no-space' },
      { event: 'message', data: ' two' },
    ]);
  });

  it('drops comment lines (keep-alive pings) without disturbing the event around them', async () => {
    expect(await parse([': keep-alive\n\n', 'data: a\n: ping in the middle\ndata: b\n\n', ':\n\n'])).toEqual([{ event: 'message', data: 'a\nb' }]);
  });

  it('accepts CRLF and lone CR line endings', async () => {
    expect(await parse(['event: x\r\ndata: crlf\r\n\r\n', 'data: cr\r\r'])).toEqual([
      { event: 'x', data: 'crlf' },
      { event: 'message', data: 'cr' },
    ]);
  });

  it('does not read a CRLF split across two chunks as two line endings', async () => {
    expect(await parse(['data: a\r', '\ndata: b\r\n\r', '\n'])).toEqual([{ event: 'message', data: 'a\nb' }]);
  });

  it('reassembles frames split across chunks at every byte', async () => {
    const stream = 'event: content_block_delta\r\ndata: {"text":"héllo 👋"}\r\n\r\n: ping\r\n\r\nevent: message_stop\r\ndata: {}\r\n\r\n';
    const expected = [
      { event: 'content_block_delta', data: '{"text":"héllo 👋"}' },
      { event: 'message_stop', data: '{}' },
    ];
    expect(await parse(bytewise(stream))).toEqual(expected);
    expect(await parse([stream])).toEqual(expected);
  });

  it('decodes a multi-byte character split between chunks', async () => {
    const bytes = enc.encode('data: 日本\n\n');
    expect(await parse([bytes.subarray(0, 8), bytes.subarray(8)])).toEqual([{ event: 'message', data: '日本' }]);
  });

  it('keeps the last id', async () => {
    expect(await parse(['id: 7\ndata: a\n\ndata: b\n\n'])).toEqual([
      { event: 'message', data: 'a', id: '7' },
      { event: 'message', data: 'b', id: '7' },
    ]);
  });

  it('does not dispatch an event with no data, and forgets its name', async () => {
    expect(await parse(['event: ping\n\ndata: x\n\n'])).toEqual([{ event: 'message', data: 'x' }]);
  });

  it('ignores retry: and unknown fields', async () => {
    expect(await parse(['retry: 1000\nfoo: bar\nbare\ndata: x\n\n'])).toEqual([{ event: 'message', data: 'x' }]);
  });

  it('strips a leading byte-order mark', async () => {
    expect(await parse(['\uFEFFdata: x\n\n'])).toEqual([{ event: 'message', data: 'x' }]);
  });

  describe('at the end of the stream', () => {
    it('discards a line cut off before its line ending (it may be half a JSON object)', async () => {
      expect(await parse(['data: {"a":1}\n\ndata: {"b":'])).toEqual([{ event: 'message', data: '{"a":1}' }]);
    });

    it('dispatches an event whose lines arrived whole but whose blank line did not', async () => {
      expect(await parse(['data: [DONE]\n'])).toEqual([{ event: 'message', data: '[DONE]' }]);
    });

    it('yields nothing for an empty stream', async () => {
      expect(await parse([])).toEqual([]);
    });
  });

  it('stops pulling chunks when the consumer stops', async () => {
    let pulled = 0;
    async function* source() {
      for (;;) {
        pulled++;
        yield enc.encode('data: x\n\n');
      }
    }
    for await (const _ of parseSse(source(), ORIGIN)) break;
    expect(pulled).toBe(1);
  });

  describe('on long lines', () => {
    it('searches each byte for a line end a bounded number of times, not once per chunk that extends its line', async () => {
      // 2 MiB of one `data:` line in 4 KiB chunks, then many short lines in one chunk: a
      // parser that searches its whole buffer again per chunk, or the rest of a chunk
      // again per line, scans hundreds of times the input here.
      const long = `data: ${'x'.repeat(2 * MiB)}\n\n`;
      const short = 'data: {}\n\n'.repeat(5_000);
      const parts = [...pieces(enc.encode(long), 4096), enc.encode(short)];
      const bytes = long.length + short.length;
      const { result, scanned } = await countingScans(() => parse(parts));
      expect(result).toHaveLength(5_001);
      expect(result[0]?.data).toHaveLength(2 * MiB);
      expect(scanned).toBeGreaterThanOrEqual(bytes);
      expect(scanned).toBeLessThanOrEqual(4 * bytes);
    });

    it(`fails a line longer than ${SSE_MAX_LINE_BYTES / MiB} MiB as a retryable network_error, having read little more than that`, async () => {
      let pulled = 0;
      const chunk = enc.encode('a'.repeat(64 * 1024));
      async function* endless() {
        // Bounded only so that a parser that never gives up still ends the test.
        for (let i = 0; i < (3 * SSE_MAX_LINE_BYTES) / chunk.length; i++) {
          pulled++;
          yield i === 0 ? enc.encode('data: ') : chunk;
        }
      }
      const error = await drain(parseSse(endless(), ORIGIN));
      expect(LlmError.is(error)).toBe(true);
      expect(error).toMatchObject({ type: 'network_error', retryable: true, provider: 'anthropic', endpoint: 'POST /v1/messages' });
      expect((error as Error).message).toContain(`${SSE_MAX_LINE_BYTES / MiB} MiB`);
      expect(pulled * chunk.length).toBeLessThanOrEqual(SSE_MAX_LINE_BYTES + 2 * chunk.length);
    });

    it('fails a line past the cap that arrives in one chunk with its line ending', async () => {
      const error = await drain(parseSse(chunked([`: ${'p'.repeat(SSE_MAX_LINE_BYTES)}\n\ndata: x\n\n`]), ORIGIN));
      expect(error).toMatchObject({ type: 'network_error', retryable: true });
    });

    it(`fails an event whose data: lines add up to more than ${SSE_MAX_EVENT_BYTES / MiB} MiB, each line under the cap`, async () => {
      const line = `data: ${'d'.repeat(MiB)}\n`;
      const lines = Array.from({ length: SSE_MAX_EVENT_BYTES / MiB + 1 }, () => line);
      const error = await drain(parseSse(chunked([...lines, '\n']), ORIGIN));
      expect(LlmError.is(error)).toBe(true);
      expect(error).toMatchObject({ type: 'network_error', retryable: true });
      expect((error as Error).message).toContain(`${SSE_MAX_EVENT_BYTES / MiB} MiB`);
    });

    it('passes a line and an event just under the caps', async () => {
      const data = 'z'.repeat(SSE_MAX_EVENT_BYTES - 'data: '.length);
      const events = await parse([...pieces(enc.encode(`data: ${data}\n\n`), MiB)]);
      expect(events).toHaveLength(1);
      expect(events[0]?.data.length).toBe(data.length);
    });
  });
});

/** `bytes` cut into pieces of `size`. */
function pieces(bytes: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, at + size));
  return out;
}

/** Reads a stream to its end; the error it threw, if any. */
async function drain(events: AsyncIterable<SseEvent>): Promise<unknown> {
  try {
    for await (const _ of events);
  } catch (error) {
    return error;
  }
  return undefined;
}

/**
 * Runs `run` while counting the characters and bytes every `indexOf` on a string, a
 * typed array or a Buffer looks at (from where it starts to the match, or to the end): the work of searching for line ends, whichever of
 * the three the parser searches. The real methods still do the searching.
 */
async function countingScans<T>(run: () => Promise<T>): Promise<{ result: T; scanned: number }> {
  let scanned = 0;
  const typedArray = Object.getPrototypeOf(Uint8Array.prototype) as { indexOf: (this: Uint8Array, ...args: unknown[]) => number };
  const targets = [String.prototype, typedArray, Buffer.prototype] as unknown as { indexOf: (this: { length: number }, search: unknown, from?: unknown) => number }[];
  const originals = targets.map((t) => t.indexOf);
  targets.forEach((target, i) => {
    const original = originals[i]!;
    target.indexOf = function (this: { length: number }, search: unknown, from?: unknown, ...rest: unknown[]) {
      const start = typeof from === 'number' ? Math.max(0, from < 0 ? this.length + from : from) : 0;
      const found = (original as (...args: unknown[]) => number).call(this, search, from, ...rest);
      // Up to the match and no further: that is all a search looks at.
      scanned += Math.max(0, (found < 0 ? this.length : found + 1) - start);
      return found;
    };
  });
  try {
    return { result: await run(), scanned };
  } finally {
    targets.forEach((target, i) => (target.indexOf = originals[i]!));
  }
}

