import type { IncomingHttpHeaders } from 'node:http';
import { request, type Dispatcher } from 'undici';
import { LlmAbortError } from './abort-error';
import { classifyNetworkError } from './classify';
import { endpointLabel, LlmError } from './llm-error';

export interface PostStreamOptions {
  /** Injected, never the global one: tests point it at a local server or a MockAgent. */
  dispatcher: Dispatcher;
  /** For error messages and types only. */
  provider: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Aborting it closes the request at once and throws {@link LlmAbortError}. */
  signal: AbortSignal;
  /**
   * The longest silence tolerated: before the response headers, and between two body
   * chunks. Any byte resets it, keep-alive pings included, so a model that thinks for
   * ten minutes behind Anthropic's pings is never cut, while a half-open socket (no FIN,
   * no RST, no bytes) becomes a retryable `network_error` instead of a hang.
   */
  idleTimeoutMs: number;
  /** Called with the size of every body chunk as it arrives, so the caller can heartbeat. */
  onBytes?: (n: number) => void;
  /**
   * Awaited with the body just before the request leaves (the fleet limits' lease,
   * docs/fleet-limits.md): what it waits is no silence of the provider's, so the idle timer
   * starts after it. It throws to keep the request from leaving (a cancel while it waits).
   */
  beforeRequest?: (body: string) => Promise<void>;
  /** Called with the response's status and headers as soon as they are in, whatever the status. */
  onResponse?: (status: number, headers: IncomingHttpHeaders) => void;
}

export interface StreamResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** `POST /path`, for error messages. */
  endpoint: string;
  /**
   * The body, chunk by chunk. Iterate it once. It throws `LlmError` (`network_error`)
   * when the connection fails or goes idle, and `LlmAbortError` when the caller aborts.
   * Leaving the loop early (break, return, throw) closes the connection.
   */
  body: AsyncIterable<Uint8Array>;
  /** Closes the connection if the body was not read to its end. Idempotent. */
  close(): void;
}

/**
 * POSTs `body` and returns as soon as the response headers are in, whatever the status:
 * the caller decides what a 429 means, this layer only moves bytes.
 *
 * One attempt, no retries: Temporal is the only retry layer. A silent socket, a failed
 * connection and a cut stream all come out as a typed `LlmError`; an abort comes out as
 * `LlmAbortError`, decided by looking at `signal.aborted` BEFORE looking at the error,
 * because undici reports an abort as an error that looks like a broken socket.
 */
export async function postStream(opts: PostStreamOptions): Promise<StreamResponse> {
  const { dispatcher, provider, url, headers, body, signal, idleTimeoutMs, onBytes, beforeRequest, onResponse } = opts;
  if (!(Number.isFinite(idleTimeoutMs) && idleTimeoutMs > 0)) {
    throw new RangeError(`idleTimeoutMs must be a positive number of milliseconds, got ${idleTimeoutMs}`);
  }
  const endpoint = endpointLabel('POST', url);
  if (signal.aborted) throw new LlmAbortError(provider, signal.reason);
  if (beforeRequest) {
    await beforeRequest(body);
    if (signal.aborted) throw new LlmAbortError(provider, signal.reason);
  }

  // Our own controller, so the idle timer can kill the request without touching the
  // caller's signal, which would make an idle cut look like a user abort.
  const controller = new AbortController();
  let idleFired = false;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      idleFired = true;
      controller.abort(new Error(`no data for ${idleTimeoutMs} ms`));
    }, idleTimeoutMs);
  };
  const disarm = () => clearTimeout(timer);
  const onCallerAbort = () => controller.abort(signal.reason);
  signal.addEventListener('abort', onCallerAbort, { once: true });
  const release = () => {
    disarm();
    signal.removeEventListener('abort', onCallerAbort);
  };

  /** The order of these checks is the point: abort, then our idle cut, then the transport. */
  const translate = (err: unknown): Error => {
    if (signal.aborted) return new LlmAbortError(provider, signal.reason);
    if (idleFired) return new LlmError({ type: 'network_error', provider, endpoint, detail: `no data for ${idleTimeoutMs} ms` });
    return classifyNetworkError(provider, err, endpoint);
  };

  // undici's own timers are set BEHIND ours, not off. Its defaults (300 s each) would
  // otherwise cut a longer idleTimeoutMs short with a less helpful message, and turning
  // them off entirely would leave no net under our timer. At twice our limit they only
  // fire if our timer failed to, and then as the same retryable `network_error`.
  const backstopMs = idleTimeoutMs * 2;

  arm();
  let response: Dispatcher.ResponseData;
  try {
    response = await request(url, {
      dispatcher,
      method: 'POST',
      headers,
      body,
      signal: controller.signal,
      headersTimeout: backstopMs,
      bodyTimeout: backstopMs,
    });
  } catch (err) {
    release();
    throw translate(err);
  }
  onResponse?.(response.statusCode, response.headers);

  const res = response.body;
  let ended = false;
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    release();
    // Destroying an unfinished body makes undici drop the socket: the server sees the
    // client go away instead of streaming on into a buffer nobody reads.
    if (!ended) res.destroy();
  };
  arm(); // the headers were bytes; the silence clock starts over for the body

  async function* chunks(): AsyncGenerator<Uint8Array> {
    try {
      const it = res[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
      for (;;) {
        // The clock runs only while we wait on the network, never while the consumer
        // works on a chunk, so a slow consumer is not mistaken for a silent server.
        arm();
        let next: IteratorResult<Buffer>;
        try {
          next = await it.next();
        } catch (err) {
          throw translate(err);
        } finally {
          disarm();
        }
        if (next.done) {
          ended = true;
          return;
        }
        onBytes?.(next.value.length);
        yield next.value;
      }
    } finally {
      close();
    }
  }

  return { status: response.statusCode, headers: response.headers, endpoint, body: chunks(), close };
}

/**
 * Reads up to `maxBytes` of a (usually error) body as text and closes the response. A
 * connection that dies halfway leaves the part that arrived: the status alone still
 * classifies the failure. An abort is still an abort.
 */
export async function readBodyText(res: StreamResponse, maxBytes = 64 * 1024): Promise<string> {
  const parts: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of res.body) {
      parts.push(chunk);
      size += chunk.length;
      if (size >= maxBytes) break;
    }
  } catch (err) {
    if (!LlmError.is(err)) throw err;
  } finally {
    res.close();
  }
  return Buffer.concat(parts).subarray(0, maxBytes).toString('utf8');
}
