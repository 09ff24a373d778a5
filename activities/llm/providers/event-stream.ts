import { LlmAbortError } from '../abort-error';
import { classifyHttpError, classifyStreamError, malformedFrameError, truncatedStreamError } from '../classify';
import { postStream, readBodyText } from '../http';
import { LlmError } from '../llm-error';
import { parseSse, type SseEvent } from '../sse';
import { ProgressTracker } from './progress';
import type { ProviderCall } from './types';

export interface EventStream {
  /** `POST /path`, for error messages. */
  endpoint: string;
  events: AsyncIterable<SseEvent>;
  progress: ProgressTracker;
}

/**
 * The part every adapter shares: POST the JSON body, turn a non-2xx answer into a
 * classified `LlmError` (with the server's stated wait), and hand back the SSE events
 * of a 2xx one. Leaving the event loop early closes the connection.
 */
export async function openEventStream(provider: string, call: ProviderCall, url: string, headers: Record<string, string>, body: unknown): Promise<EventStream> {
  const progress = new ProgressTracker(call.onProgress);
  const res = await postStream({
    dispatcher: call.dispatcher,
    provider,
    url,
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify(body),
    signal: call.signal,
    idleTimeoutMs: call.idleTimeoutMs,
    onBytes: (n) => progress.addBytes(n),
    ...(call.beforeRequest ? { beforeRequest: call.beforeRequest } : {}),
    ...(call.onResponse ? { onResponse: call.onResponse } : {}),
  });
  if (res.status < 200 || res.status >= 300) {
    const text = await readBodyText(res);
    throw classifyHttpError(provider, res.status, text, res.headers, Date.now(), res.endpoint);
  }
  // A 200 with a JSON body is a server that ignored `stream: true` or a gateway that
  // answered for the provider. Without this check it would read as a truncated stream
  // and be retried ten times for nothing.
  const contentType = String(res.headers['content-type'] ?? '').toLowerCase();
  if (contentType.includes('json') && !contentType.includes('event-stream')) {
    const text = await readBodyText(res);
    const payload = parseJson(text);
    if (payload.ok && typeof payload.value === 'object' && payload.value !== null && 'error' in payload.value) {
      throw classifyStreamError(provider, payload.value, res.endpoint);
    }
    throw new LlmError({ type: 'unknown', provider, endpoint: res.endpoint, status: res.status, detail: `expected an event stream, got ${contentType}` });
  }
  return { endpoint: res.endpoint, events: parseSse(res.body, { provider, endpoint: res.endpoint }), progress };
}

/** One data frame as JSON. Garbage mid-stream is a retryable `network_error`; see `malformedFrameError`. */
export function frameJson(provider: string, data: string, endpoint: string): unknown {
  const parsed = parseJson(data);
  if (!parsed.ok) throw malformedFrameError(provider, data, endpoint);
  return parsed.value;
}

/**
 * The stream ended without its terminal sentinel. If the caller aborted, that is why,
 * and it is an abort; otherwise the answer was cut short and a retry should get all of it.
 */
export function endedWithoutSentinel(provider: string, call: ProviderCall, sentinel: string, endpoint: string): never {
  if (call.signal.aborted) throw new LlmAbortError(provider, call.signal.reason);
  throw truncatedStreamError(provider, sentinel, endpoint);
}

/**
 * `table[key]` only for a key the table itself holds: a wire value such as `"constructor"`
 * would otherwise find Object.prototype's member, and a function would pass for a stop reason.
 */
export function ownEntry<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

/**
 * A tool call the stream left without a name or an id can be neither run nor answered,
 * and the message schema refuses it: a session that recorded one could not continue as
 * new. The providers always send both (the adapters make Gemini's ids, and OpenAI's when a
 * server sends none), so the stream was mangled on the way: a retryable `network_error`,
 * as a malformed frame is.
 */
export function requireCompleteToolCalls(provider: string, calls: readonly { id: string; name: string }[], endpoint: string): void {
  const at = calls.findIndex((c) => c.id === '' || c.name === '');
  if (at < 0) return;
  const missing = calls[at]?.name === '' ? 'a name' : 'an id';
  throw new LlmError({ type: 'network_error', provider, endpoint, detail: `tool call ${at + 1} of the answer came without ${missing}` });
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** `base` + `path`, tolerating a trailing slash on the configured base URL. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}${path}`;
}
