import { lookup } from 'node:dns/promises';
import { STATUS_CODES } from 'node:http';
import { isIP } from 'node:net';
import { TextDecoder } from 'node:util';
import { request, type Dispatcher } from 'undici';
import { isReadOnlyMethod, type HttpRequestInput } from '../../contracts/tools/http-request';
import type { ToolOutcome } from '../../contracts/tools/tool-outcome';
import { addressHost, HTTP_ALLOWLIST_ENV, type HostAllowlist } from './http-allowlist';
import { restrictedKind } from './restricted-address';
import type { ToolRunContext } from './tool-run-context';

/** Every address a host name resolves to, as `dns.lookup(name, { all: true })` gives them. */
export type ResolveHost = (hostname: string) => Promise<readonly { address: string }[]>;

/**
 * The system resolver (getaddrinfo: /etc/hosts, then DNS), which is what a connection would
 * use. IPv4 first: the addresses are tried in turn, and a container's IPv6 is the likelier
 * to be missing.
 */
export const systemResolveHost: ResolveHost = (hostname) => lookup(hostname, { all: true, order: 'ipv4first' });

export interface HttpToolOptions {
  dispatcher: Dispatcher;
  allowlist: HostAllowlist;
  /** Body bytes kept for the model; the rest is cut, with a note. */
  maxResponseBytes: number;
  /** Deadline for the whole exchange, the name's resolution, headers and body. */
  timeoutMs: number;
  /** How a host name becomes addresses; the request connects to exactly what it returned. */
  resolveHost: ResolveHost;
}

export interface HttpCallContext extends ToolRunContext {
  /** Sent as `Idempotency-Key` on side-effecting methods. */
  idempotencyKey?: string;
}

/** Response headers worth the model's attention; the rest is noise in its context. */
const SHOWN_RESPONSE_HEADERS = ['content-type', 'content-length', 'location', 'retry-after'];

/**
 * Errors that mean the request never left this machine, so no side effect is possible.
 * `UND_ERR_INVALID_ARG` is undici refusing to build the request (a header value outside Latin-1).
 */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_INVALID_ARG']);

/** A connection that failed with one of these may go to the name's next address: nothing was sent. */
const NEXT_ADDRESS_CODES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);

const TEXT_TYPE = /^(?:text\/|application\/(?:json|xml|javascript|ecmascript|x-www-form-urlencoded|graphql|yaml|x-yaml|x-ndjson|problem\+json)\b|[a-z]+\/[a-z0-9.+-]*\+(?:json|xml)\b)/i;

/**
 * Sends one request for the model. What the target does (a 404, a refused connection, a
 * slow answer) is an error *result*: the model reads it and decides. Only cancellation and
 * our own bugs are thrown. Redirects are returned, not followed: following one would send
 * a second request (for POST, a second side effect) to a host nobody checked.
 *
 * The host name is resolved here, every address is checked against the allowlist, and the
 * connection goes to one of those very addresses (the name stays in `Host` and in TLS's
 * server name). Resolving once closes DNS rebinding: a second resolution by the connector
 * could answer 127.0.0.1 after the check saw a public address.
 */
export async function runHttpRequest(input: HttpRequestInput, options: HttpToolOptions, context: HttpCallContext): Promise<ToolOutcome> {
  const url = new URL(input.url);
  const target = `${input.method} ${url.href}`;
  if (!options.allowlist.allows(url)) return { code: 'error', content: blockedMessage(url, options.allowlist) };

  const sideEffecting = !isReadOnlyMethod(input.method);
  const headers: Record<string, string> = { ...input.headers };
  if (sideEffecting && context.idempotencyKey !== undefined) headers['idempotency-key'] = context.idempotencyKey;

  context.signal.throwIfAborted();
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = AbortSignal.any([context.signal, deadline]);
  try {
    const addresses = await addressesOf(url, options.resolveHost, signal);
    if (!isNonEmpty(addresses)) return { code: 'error', content: `${target} failed: ${url.hostname} has no address (ENOTFOUND). The request was not sent.` };
    const refused = addresses.find((address) => !options.allowlist.allowsAddress(address, url));
    if (refused !== undefined) return { code: 'error', content: restrictedMessage(url, refused, `resolves to ${refused}, which is`) };
    const response = await sendToFirst(addresses, (address) => {
      const direct = new URL(url.href);
      direct.hostname = addressHost(address);
      return request(direct, { dispatcher: options.dispatcher, method: input.method, headers: { ...headers, host: url.host }, body: input.body ?? null, signal });
    });
    const body = await readCapped(response.body, options.maxResponseBytes, context);
    return formatResponse(input, response, body, options.maxResponseBytes);
  } catch (error) {
    // Cancellation is the activity's to report: rethrow the SDK's reason (a CancelledFailure).
    if (context.signal.aborted) throw context.signal.reason ?? error;
    const unknownOutcome = sideEffecting ? sentNote(context.idempotencyKey) : '';
    if (deadline.aborted) return { code: 'error', content: `${target} timed out after ${options.timeoutMs} ms.${unknownOutcome}` };
    const code = errorCode(error);
    if (code === undefined) throw error;
    const note = NOT_SENT_CODES.has(code) ? ' The request was not sent.' : unknownOutcome;
    return { code: 'error', content: `${target} failed: ${errorMessage(error)} (${code}).${note}` };
  }
}

/** An IP literal is used as it is; a name is resolved, racing the deadline and cancellation. */
async function addressesOf(url: URL, resolveHost: ResolveHost, signal: AbortSignal): Promise<string[]> {
  const literal = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(literal) !== 0) return [literal];
  const resolved = await untilAborted(resolveHost(url.hostname), signal);
  const addresses = [...new Set(resolved.map((entry) => entry.address))];
  // A name here would be resolved again by the connector, unchecked.
  const notAnAddress = addresses.find((address) => isIP(address) === 0);
  if (notAnAddress !== undefined) throw new Error(`resolveHost(${JSON.stringify(url.hostname)}) returned ${JSON.stringify(notAnAddress)}, which is not an IP address`);
  return addresses;
}

/** Each address in turn while a connection fails before sending, as Node's own connect does. */
async function sendToFirst(
  [address, ...rest]: readonly [string, ...string[]],
  send: (address: string) => Promise<Dispatcher.ResponseData>,
): Promise<Dispatcher.ResponseData> {
  try {
    return await send(address);
  } catch (error) {
    const code = errorCode(error);
    if (!isNonEmpty(rest) || code === undefined || !NEXT_ADDRESS_CODES.has(code)) throw error;
    return sendToFirst(rest, send);
  }
}

function isNonEmpty<T>(items: readonly T[]): items is readonly [T, ...T[]] {
  return items.length > 0;
}

/** getaddrinfo cannot be cancelled; the caller stops waiting for it instead. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** `resolution` leads to the range's name: "is" for an IP literal, "resolves to …, which is" for a name. */
function restrictedMessage(url: URL, address: string, resolution: string): string {
  const where = url.port === '' ? url.hostname : `${url.hostname}:${url.port}`;
  const entry = url.port === '' ? addressHost(address) : `${addressHost(address)}:${url.port}`;
  return (
    `Request blocked: ${where} ${resolution} in the ${restrictedKind(address)!} range; http_request reaches loopback, link-local and private addresses ` +
    `only when ${HTTP_ALLOWLIST_ENV} lists that IP itself (${entry}), never through a host name or a wildcard. The request was not sent.`
  );
}

function blockedMessage(url: URL, allowlist: HostAllowlist): string {
  const where = url.port === '' ? url.hostname : `${url.hostname}:${url.port}`;
  const literal = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (allowlist.matches(url)) return restrictedMessage(url, literal, 'is');
  if (allowlist.entries.length === 0) {
    return `Request blocked: no hosts are allowed (${HTTP_ALLOWLIST_ENV} is empty), so http_request cannot reach ${where}.`;
  }
  return `Request blocked: ${where} is not in the allowlist (${HTTP_ALLOWLIST_ENV}). Allowed: ${allowlist.entries.join(', ')}.`;
}

function sentNote(key: string | undefined): string {
  const keyed = key === undefined ? '' : ` It carried Idempotency-Key ${key}; a retry with the same key is safe only if the server honours it.`;
  return ` The request may have reached the server and had its effect; check before repeating it.${keyed}`;
}

interface CappedBody {
  bytes: Buffer;
  truncated: boolean;
}

async function readCapped(body: AsyncIterable<Buffer | Uint8Array | string>, maxBytes: number, context: ToolRunContext): Promise<CappedBody> {
  const chunks: Buffer[] = [];
  let received = 0;
  let truncated = false;
  // Leaving the loop early destroys the stream, so an endless body is not downloaded.
  for await (const chunk of body) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    const room = maxBytes - received;
    if (buffer.length > room) {
      chunks.push(buffer.subarray(0, room));
      received += room;
      truncated = true;
      break;
    }
    chunks.push(buffer);
    received += buffer.length;
    context.onProgress?.({ bytesReceived: received });
  }
  return { bytes: Buffer.concat(chunks), truncated };
}

function formatResponse(input: HttpRequestInput, response: Dispatcher.ResponseData, body: CappedBody, maxBytes: number): ToolOutcome {
  const status = response.statusCode;
  const reason = response.statusText || STATUS_CODES[status] || '';
  const lines = [`HTTP ${status}${reason ? ` ${reason}` : ''}`];
  for (const name of SHOWN_RESPONSE_HEADERS) {
    const value = response.headers[name];
    if (value !== undefined) lines.push(`${name}: ${Array.isArray(value) ? value.join(', ') : value}`);
  }
  let text = '';
  if (body.bytes.length > 0) {
    const contentType = headerValue(response.headers['content-type']);
    text = isText(contentType, body.bytes)
      ? decode(body.bytes, contentType)
      : `[binary body not shown: ${contentType ?? 'no content-type'}, ${body.bytes.length}${body.truncated ? '+' : ''} bytes]`;
  }
  let content = lines.join('\n');
  if (text !== '') content += `\n\n${text}`;
  if (body.truncated) content += `\n\n[body cut at ${maxBytes} bytes; the response is longer]`;
  if (status >= 300 && status < 400 && response.headers.location !== undefined) {
    content += `\n\n[redirect not followed; to follow it, call http_request with the Location URL${input.method === 'GET' || input.method === 'HEAD' ? '' : ' and decide the method yourself'}]`;
  }
  return { code: status >= 400 ? 'error' : 'ok', content };
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** No content-type: a NUL byte is the cheapest reliable sign of binary data. */
function isText(contentType: string | undefined, bytes: Buffer): boolean {
  if (contentType === undefined) return !bytes.includes(0);
  return TEXT_TYPE.test(contentType.trim());
}

function decode(bytes: Buffer, contentType: string | undefined): string {
  const charset = /;\s*charset="?([^";\s]+)/i.exec(contentType ?? '')?.[1] ?? 'utf-8';
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset);
  } catch {
    decoder = new TextDecoder('utf-8');
  }
  // `stream: true` holds back a multi-byte character cut by the size cap instead of printing U+FFFD.
  return decoder.decode(bytes, { stream: true });
}

/** Network and protocol errors carry a string `code` (`ECONNREFUSED`, `UND_ERR_SOCKET`); our bugs do not. */
function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  if (error instanceof AggregateError) return errorCode(error.errors[0]);
  return undefined;
}

function errorMessage(error: unknown): string {
  if (error instanceof AggregateError && error.message === '') return errorMessage(error.errors[0]);
  return error instanceof Error && error.message !== '' ? error.message : String(error);
}
