import { describe, expect, it } from 'vitest';
import { parseSse, type SseEvent } from '../activities/llm/sse';

const enc = new TextEncoder();

async function* chunked(parts: (string | Uint8Array)[]): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield typeof p === 'string' ? enc.encode(p) : p;
}

async function parse(parts: (string | Uint8Array)[]): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const ev of parseSse(chunked(parts))) out.push(ev);
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
    for await (const _ of parseSse(source())) break;
    expect(pulled).toBe(1);
  });
});
