import { LIVE_STREAM_VERSION, type LogFrame } from '../contracts/live-stream';
import type { SessionEvent } from '../contracts/session-log';
import { MAX_FRAME_BYTES } from './frame-lines';

/** Room left for the frame's own fields around its events. */
const FRAME_OVERHEAD = 256 + 1024;

/**
 * A session's appended events as log frames within MAX_FRAME_BYTES each, in seq order. An
 * event alone above the bound (a large tool result) is left out: the subscriber sees the
 * gap in seqs at the next frame and reads the missing events from the log.
 */
export function logFramesOf(sessionId: string, events: readonly SessionEvent[]): LogFrame[] {
  const frames: LogFrame[] = [];
  let batch: SessionEvent[] = [];
  let size = FRAME_OVERHEAD + Buffer.byteLength(sessionId);
  const flush = () => {
    if (batch.length > 0) frames.push({ kind: 'log', v: LIVE_STREAM_VERSION, sessionId, events: batch });
    batch = [];
    size = FRAME_OVERHEAD + Buffer.byteLength(sessionId);
  };
  for (const event of events) {
    const bytes = Buffer.byteLength(JSON.stringify(event)) + 1;
    if (FRAME_OVERHEAD + Buffer.byteLength(sessionId) + bytes > MAX_FRAME_BYTES) {
      flush();
      continue;
    }
    if (size + bytes > MAX_FRAME_BYTES) flush();
    batch.push(event);
    size += bytes;
  }
  flush();
  return frames;
}
