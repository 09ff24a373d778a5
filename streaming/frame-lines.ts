import { LiveFrameSchema, type LiveFrame } from '../contracts/live-stream';

/**
 * The most a frame may take as JSON: below NATS's default payload limit (1 MB), and far
 * above a delta. A log frame is cut into frames within it (log-frames.ts); an event alone
 * above it is not sent, and the subscriber reads it from the log, as it reads whatever the
 * stream lost.
 */
export const MAX_FRAME_BYTES = 512 * 1024;

/** The frame as one line of JSON, or undefined when it is above MAX_FRAME_BYTES. */
export function encodeFrame(frame: LiveFrame): Buffer | undefined {
  const line = Buffer.from(`${JSON.stringify(frame)}\n`);
  return line.length > MAX_FRAME_BYTES ? undefined : line;
}

export type Decoded = { ok: true; frame: LiveFrame } | { ok: false; why: string };

/**
 * One frame from the other process: JSON that LiveFrameSchema accepts, within the size
 * bound. Never throws; `why` names what was wrong (a field's path), never its value.
 */
export function decodeFrame(bytes: Uint8Array | string): Decoded {
  const size = typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.length;
  if (size > MAX_FRAME_BYTES) return { ok: false, why: `larger than ${MAX_FRAME_BYTES} bytes` };
  let json: unknown;
  try {
    json = JSON.parse(typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('utf8'));
  } catch {
    return { ok: false, why: 'not JSON' };
  }
  const parsed = LiveFrameSchema.safeParse(json);
  if (parsed.success) return { ok: true, frame: parsed.data };
  const issue = parsed.error.issues[0];
  return { ok: false, why: `${issue?.path.join('.') || 'frame'}: ${issue?.message ?? 'invalid'}` };
}

/**
 * Splits a byte stream into lines of at most MAX_FRAME_BYTES: a longer line is skipped to
 * its end and reported, so a peer that never sends a newline cannot grow memory.
 */
export class LineSplitter {
  #parts: Buffer[] = [];
  #size = 0;
  #skipping = false;

  constructor(
    private readonly onLine: (line: Buffer) => void,
    private readonly onOverlong: () => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
      this.#take(chunk.subarray(start, nl));
      if (!this.#skipping && this.#size > 0) this.onLine(Buffer.concat(this.#parts, this.#size));
      this.#parts = [];
      this.#size = 0;
      this.#skipping = false;
      start = nl + 1;
    }
    this.#take(chunk.subarray(start));
  }

  #take(part: Buffer): void {
    if (this.#skipping || part.length === 0) return;
    if (this.#size + part.length > MAX_FRAME_BYTES) {
      this.#skipping = true;
      this.#parts = [];
      this.#size = 0;
      this.onOverlong();
      return;
    }
    this.#parts.push(part);
    this.#size += part.length;
  }
}
