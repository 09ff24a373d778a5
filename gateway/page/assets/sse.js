/**
 * Server-Sent Events over fetch. EventSource cannot send an Authorization header, so the
 * page reads the stream itself: this is the text/event-stream format's parser (fields
 * `event`, `data`, `id`; comment lines, the gateway's keep-alives, skipped).
 */

/**
 * Calls `onEvent({ event, id, data })` for each event of the response body, in order, and
 * returns when the body ends. `id` is undefined for an event without one (deltas, progress).
 */
export async function readEventStream(body, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let event = newEvent();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    for (let end = buffer.indexOf('\n'); end >= 0; end = buffer.indexOf('\n')) {
      const line = buffer.slice(0, end).replace(/\r$/, '');
      buffer = buffer.slice(end + 1);
      if (line === '') {
        if (event.data.length > 0) onEvent({ event: event.event, id: event.id, data: event.data.join('\n') });
        event = newEvent();
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') event.data.push(text);
      else if (field === 'event') event.event = text;
      else if (field === 'id') event.id = text;
    }
  }
}

function newEvent() {
  return { event: 'message', id: undefined, data: [] };
}
