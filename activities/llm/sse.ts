import { LlmError } from './llm-error';

/** One dispatched server-sent event. `event` is `'message'` when the frame named none. */
export interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

/** Who is streaming, for the error a stream past the caps fails with. */
export interface SseOrigin {
  provider: string;
  /** `POST /path`. */
  endpoint: string;
}

/**
 * The longest line, and the most bytes of `data:` lines in one event, a stream may send. The
 * largest real event is a Gemini function call, which arrives whole in one event: its
 * arguments are bounded by the output token limit (65,536 tokens, about 256 KiB of text,
 * under 2 MiB even if every character were JSON-escaped). Every other provider streams in
 * small deltas. So 8 MiB passes every answer a provider can give, and stops a broken proxy
 * or a hostile endpoint from growing one line until the worker runs out of memory.
 */
export const SSE_MAX_LINE_BYTES = 8 * 1024 * 1024;
export const SSE_MAX_EVENT_BYTES = 8 * 1024 * 1024;

const LF = 0x0a;
const CR = 0x0d;
const MiB = 1024 * 1024;

/**
 * Server-sent events over a byte stream, per the WHATWG EventSource parsing rules:
 * `event:`/`data:`/`id:` fields, several `data:` lines joined with `\n`, lines ending in
 * LF, CRLF or a lone CR, and a blank line dispatching the event. Bytes may be split
 * anywhere: inside a frame, inside a line, between the CR and LF of one line ending, or
 * inside a multi-byte UTF-8 character.
 *
 * Lines are found in the bytes, each byte searched once for CR and once for LF, and a
 * line is decoded only when it is whole (CR and LF never occur inside a multi-byte UTF-8
 * character, so a whole line is whole text). A long line arriving in many chunks is held
 * as those chunks and joined once, at its end: searching or joining the whole held line
 * again per chunk made a 16 MiB line cost seconds of the worker's event loop (heartbeats,
 * cancellations and every other activity wait behind it). A line or an event past
 * {@link SSE_MAX_LINE_BYTES} / {@link SSE_MAX_EVENT_BYTES} fails the stream as a
 * retryable `network_error`, as a mangled frame does: the next attempt usually comes back
 * clean, and the ladder bounds the cost if it does not.
 *
 * Comment lines (`:` first) are dropped. They are the keep-alive pings some servers send
 * while a model thinks; their bytes have already done their job one layer down (they
 * reset the idle timer and fed the heartbeat), and no adapter has a use for them.
 *
 * AT THE END OF THE STREAM a line cut off before its line ending is discarded, as the
 * spec says: it may be half a JSON object. An event whose lines all arrived whole but
 * whose closing blank line did not is dispatched, unlike the spec: a server or proxy
 * that closes right after `data: [DONE]\n` delivered a complete answer, and reporting it
 * as truncated would pay for the whole answer twice. Truncation is still caught one
 * level up, by each adapter's terminal sentinel.
 */
export async function* parseSse(chunks: AsyncIterable<Uint8Array>, origin: SseOrigin): AsyncGenerator<SseEvent> {
  // One line at a time, never `stream: true`: a line is whole text. The byte-order mark
  // is stripped by hand, from the first line only, as the spec says.
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  let firstLine = true;
  /** The start of a line whose end has not arrived: copies of chunk tails, in order. */
  let held: Uint8Array[] = [];
  let heldBytes = 0;
  /** The size of the line being taken, in bytes, for the event's cap. */
  let lineBytes = 0;
  /** The last line ended in a CR at the very end of a chunk: an LF first in the next one belongs to it. */
  let afterCr = false;
  let eventType = '';
  let dataLines: string[] = [];
  let dataBytes = 0;
  let lastId: string | undefined;

  const tooLong = (what: string, cap: number) =>
    new LlmError({ type: 'network_error', provider: origin.provider, endpoint: origin.endpoint, detail: `event stream ${what} longer than ${cap / MiB} MiB` });

  /** The held start of a line plus `tail`, its end. */
  function wholeLine(tail: Uint8Array): string {
    const size = heldBytes + tail.length;
    if (size > SSE_MAX_LINE_BYTES) throw tooLong('line', SSE_MAX_LINE_BYTES);
    lineBytes = size;
    let bytes = tail;
    if (heldBytes > 0) {
      bytes = new Uint8Array(size);
      let at = 0;
      for (const part of held) {
        bytes.set(part, at);
        at += part.length;
      }
      bytes.set(tail, at);
      held = [];
      heldBytes = 0;
    }
    let line = decoder.decode(bytes);
    if (firstLine) {
      firstLine = false;
      if (line.startsWith('\uFEFF')) line = line.slice(1);
    }
    return line;
  }

  function hold(tail: Uint8Array): void {
    heldBytes += tail.length;
    if (heldBytes > SSE_MAX_LINE_BYTES) throw tooLong('line', SSE_MAX_LINE_BYTES);
    // A copy: the producer may reuse its buffer once it has handed it over.
    held.push(tail.slice());
  }

  function* takeLine(line: string): Generator<SseEvent> {
    if (line === '') {
      if (dataLines.length > 0) yield dispatch();
      else eventType = '';
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') eventType = value;
    else if (field === 'data') {
      dataBytes += lineBytes;
      if (dataBytes > SSE_MAX_EVENT_BYTES) throw tooLong('event', SSE_MAX_EVENT_BYTES);
      dataLines.push(value);
    } else if (field === 'id' && !value.includes('\0')) lastId = value;
    // `retry:` and unknown fields are ignored, as the spec says.
  }

  function dispatch(): SseEvent {
    const ev: SseEvent = { event: eventType || 'message', data: dataLines.join('\n') };
    if (lastId !== undefined) ev.id = lastId;
    eventType = '';
    dataLines = [];
    dataBytes = 0;
    return ev;
  }

  for await (const chunk of chunks) {
    if (chunk.length === 0) continue;
    let start = 0;
    if (afterCr && chunk[0] === LF) start = 1;
    afterCr = false;
    // Where the next CR and LF are, searched for again only once passed: searching for
    // both from each line's start would scan a chunk of many short lines once per line.
    // -2: not searched yet; -1: none in the rest of the chunk.
    let nextCr = -2;
    let nextLf = -2;
    while (start < chunk.length) {
      if (nextCr !== -1 && nextCr < start) nextCr = chunk.indexOf(CR, start);
      if (nextLf !== -1 && nextLf < start) nextLf = chunk.indexOf(LF, start);
      const end = nextCr < 0 ? nextLf : nextLf < 0 ? nextCr : Math.min(nextCr, nextLf);
      if (end < 0) break;
      const line = wholeLine(chunk.subarray(start, end));
      start = end + 1;
      if (chunk[end] === CR) {
        if (start === chunk.length) afterCr = true;
        else if (chunk[start] === LF) start++;
      }
      yield* takeLine(line);
    }
    if (start < chunk.length) hold(chunk.subarray(start));
  }
  if (dataLines.length > 0) yield dispatch();
}
