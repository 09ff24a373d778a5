import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { requestTokens } from './context-window';
import type { Holds } from './holds';
import { planReply } from './plan';
import type { ScriptedReply, StatusReply } from './script';
import { encodeFrame, type Frame } from './sse';
import type { Dialect } from './wire/dialect';

/** Plays one scripted reply onto an HTTP response, in the dialect of the request. */

/** How long a held request waits for `release` before it plays anyway. */
export const DEFAULT_HOLD_TIMEOUT_MS = 30_000;

export interface Exchange {
  res: ServerResponse;
  /** Aborts when the client goes away or the server closes; every wait below honours it. */
  signal: AbortSignal;
  dialect: Dialect;
  model: string;
  body: Record<string, unknown>;
  holds: Holds;
  /** Called as each content frame goes out, with its 0-based index among the reply's content frames. */
  onContentSent?: (index: number) => void;
  /** Sent with the response whatever it is, under the reply's own: a rate-limited model's headers (rate-limit-wire.ts). */
  headers?: Record<string, string>;
}

/** Resolves `completed` or `reset`; rejects when the exchange's signal aborts. */
export async function play(scripted: ScriptedReply, ex: Exchange): Promise<'completed' | 'reset'> {
  const { res, signal, dialect } = ex;
  const reply = scripted.kind === 'context_overflow' ? overflowStatus(scripted, ex) : scripted;
  if (reply.hold) await ex.holds.wait(ex.model, reply.holdTimeoutMs ?? DEFAULT_HOLD_TIMEOUT_MS, signal);
  if (reply.delayMs) await sleep(reply.delayMs, undefined, { signal });

  if (reply.kind === 'status') {
    const body =
      reply.body === undefined
        ? JSON.stringify(dialect.errorBody(reply.status, reply))
        : typeof reply.body === 'string'
          ? reply.body
          : JSON.stringify(reply.body);
    res.writeHead(reply.status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      ...ex.headers,
      ...reply.headers,
    });
    await endResponse(res, signal, body);
    return 'completed';
  }

  const frames = dialect.frames(planReply(reply, ex.model, ex.body), ex.body);
  if (reply.kind === 'stream_error') frames.push(dialect.streamError(reply));
  const firstContent = frames.findIndex((frame) => 'data' in frame && frame.content === true);
  if (reply.kind === 'malformed') frames.splice(firstContent + 1, 0, dialect.malformed());
  // With no content the pause comes after the opening frame, or before any frame when there is none.
  const stallAfter = firstContent >= 0 ? firstContent : Math.min(0, frames.length - 1);

  res.writeHead(200, { ...dialect.streamHeaders(), ...ex.headers });
  res.flushHeaders();
  if (stallAfter < 0 && reply.stall) await stall(reply.stall, ex);
  let contentFrames = 0;
  for (const [i, frame] of frames.entries()) {
    if (i > 0 && reply.chunkDelayMs) await sleep(reply.chunkDelayMs, undefined, { signal });
    write(ex, frame);
    if ('data' in frame && frame.content === true) ex.onContentSent?.(contentFrames++);
    if (i === stallAfter && reply.stall) await stall(reply.stall, ex);
    if (i === stallAfter && reply.holdMidStream) await ex.holds.wait(ex.model, reply.holdTimeoutMs ?? DEFAULT_HOLD_TIMEOUT_MS, signal);
  }

  if (reply.kind === 'reset') {
    await flushed(res);
    res.socket?.destroy();
    return 'reset';
  }
  await endResponse(res, signal);
  return 'completed';
}

/** A context overflow is the provider's 400 for a request of this size, with the reply's other options. */
function overflowStatus(reply: Extract<ScriptedReply, { kind: 'context_overflow' }>, ex: Exchange): StatusReply {
  const { kind: _kind, contextWindow, ...options } = reply;
  const tokens = requestTokens(ex.body);
  return { ...options, kind: 'status', ...ex.dialect.contextOverflow(tokens, contextWindow ?? Math.max(1, tokens - 1)) };
}

function write(ex: Exchange, frame: Frame): void {
  ex.signal.throwIfAborted();
  ex.res.write(encodeFrame(frame, ex.dialect.eol));
}

async function stall(options: { ms: number; pingEveryMs?: number | undefined }, ex: Exchange): Promise<void> {
  const { signal } = ex;
  const forever = options.ms < 0;
  const every = options.pingEveryMs;
  if (every === undefined) {
    if (forever) await untilAborted(signal);
    else await sleep(options.ms, undefined, { signal });
    return;
  }
  // Bounded by `ms`, or for a hang by the client leaving (a write to a gone client aborts the signal).
  for (let remaining = forever ? Infinity : options.ms; remaining > 0; remaining -= every) {
    await sleep(Math.min(every, remaining), undefined, { signal });
    if (remaining > every) write(ex, ex.dialect.ping());
  }
}

function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) return reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/** Waits until everything written so far has reached the kernel, so a reset cuts after it, not before. */
function flushed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const socket = res.socket;
    if (!socket || socket.destroyed) return resolve();
    socket.write('', () => resolve());
  });
}

function endResponse(res: ServerResponse, signal: AbortSignal, body?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    res.end(body, () => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}
