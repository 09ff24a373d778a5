/**
 * One Server-Sent Events frame as the scripted server writes it.
 * `content` marks frames that carry model output; the player pauses (`stall`) after the
 * first of them, because that is where a real model goes quiet while it thinks.
 */
export type Frame = { event?: string; data: string; content?: boolean } | { comment: string };

export function dataFrame(data: unknown, opts: { event?: string; content?: boolean } = {}): Frame {
  return { ...opts, data: JSON.stringify(data) };
}

/**
 * `eol` is per provider: Gemini ends its lines with CRLF, which is why Google's own SDK
 * accepts `\r\n\r\n` as a frame separator. A client that only splits on `\n\n` would read
 * a whole Gemini stream as one frame, so the fake does it too.
 */
export function encodeFrame(frame: Frame, eol: string): string {
  if ('comment' in frame) return `: ${frame.comment}${eol}${eol}`;
  const event = frame.event === undefined ? '' : `event: ${frame.event}${eol}`;
  return `${event}data: ${frame.data}${eol}${eol}`;
}
