/** One dispatched server-sent event. `event` is `'message'` when the frame named none. */
export interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

/**
 * Server-sent events over a byte stream, per the WHATWG EventSource parsing rules:
 * `event:`/`data:`/`id:` fields, several `data:` lines joined with `\n`, lines ending in
 * LF, CRLF or a lone CR, and a blank line dispatching the event. Bytes may be split
 * anywhere: inside a frame, inside a line, between the CR and LF of one line ending, or
 * inside a multi-byte UTF-8 character.
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
export async function* parseSse(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  // Strips a leading BOM, and `stream: true` holds back a split multi-byte character.
  const decoder = new TextDecoder('utf-8');
  let buffer = '';
  let eventType = '';
  let dataLines: string[] = [];
  let lastId: string | undefined;

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
    else if (field === 'data') dataLines.push(value);
    else if (field === 'id' && !value.includes('\0')) lastId = value;
    // `retry:` and unknown fields are ignored, as the spec says.
  }

  function dispatch(): SseEvent {
    const ev: SseEvent = { event: eventType || 'message', data: dataLines.join('\n') };
    if (lastId !== undefined) ev.id = lastId;
    eventType = '';
    dataLines = [];
    return ev;
  }

  function* drain(final: boolean): Generator<SseEvent> {
    let start = 0;
    for (;;) {
      const cr = buffer.indexOf('\r', start);
      const lf = buffer.indexOf('\n', start);
      const end = cr < 0 ? lf : lf < 0 ? cr : Math.min(cr, lf);
      if (end < 0) break;
      let next = end + 1;
      if (buffer[end] === '\r') {
        // A CR as the last character may be the first half of a CRLF split across two
        // chunks; wait for the next chunk rather than read an empty line that isn't there.
        if (end === buffer.length - 1 && !final) break;
        if (buffer[end + 1] === '\n') next = end + 2;
      }
      yield* takeLine(buffer.slice(start, end));
      start = next;
    }
    buffer = buffer.slice(start);
  }

  for await (const chunk of chunks) {
    buffer += decoder.decode(chunk, { stream: true });
    yield* drain(false);
  }
  buffer += decoder.decode();
  yield* drain(true);
  if (dataLines.length > 0) yield dispatch();
}
