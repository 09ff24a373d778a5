import { STATUS_CODES } from 'node:http';
import { isRetryableLlmErrorType as isRetryableType, type LlmErrorType } from '../../contracts/errors';
import type { HeaderSource } from './header-values';
import { LlmError } from './llm-error';
import { parseGoDurationMs, serverStatedWaitMs } from './retry-after';

/**
 * The one table that turns "something went wrong talking to a provider" into a stable
 * failure `type`. Retryability follows from the type (see `contracts/errors.ts`): waiting
 * cures 408/429/529/5xx and broken connections, and cures nothing else.
 */

const MAX_DETAIL_CHARS = 300;

/** A non-2xx response. `endpoint` is `METHOD /path`, used only in the message. */
export function classifyHttpError(
  provider: string,
  status: number,
  bodyText: string,
  headers: HeaderSource | undefined,
  nowMs: number,
  endpoint?: string,
): LlmError {
  const body = describeBody(bodyText);
  const statedWaitMs = maxDefined(serverStatedWaitMs(headers, nowMs), body.retryDelayMs);
  const type = typeForStatus(status, body, statedWaitMs !== undefined);
  return new LlmError({
    type,
    provider,
    status,
    detail: body.label || STATUS_CODES[status] || 'no body',
    ...(endpoint !== undefined && { endpoint }),
    // Only a failure we will retry has a use for the server's wait; on an auth error it
    // would only suggest that waiting might help.
    ...(statedWaitMs !== undefined && isRetryableType(type) && { retryAfterMs: statedWaitMs }),
  });
}

/**
 * An error the provider sent INSIDE a 200 stream (Anthropic's `event: error`, an
 * OpenAI-compatible `{"error": …}` chunk, Gemini's `{"error": …}` frame). Mapped like the
 * HTTP error of that type, so `overloaded_error` mid-stream is as retryable as a 529.
 * There are no headers mid-stream, so no server-stated wait except Gemini's body one.
 */
export function classifyStreamError(provider: string, errorPayload: unknown, endpoint?: string): LlmError {
  const bodyText = typeof errorPayload === 'string' ? errorPayload : safeStringify(errorPayload);
  const body = describeBody(bodyText);
  const status = body.status ?? statusForErrorName(body.names);
  const type: LlmErrorType = status === undefined ? 'unknown' : typeForStatus(status, body, body.retryDelayMs !== undefined);
  return new LlmError({
    type,
    provider,
    detail: `in-stream ${body.label || 'error event'}`,
    ...(endpoint !== undefined && { endpoint }),
    ...(body.retryDelayMs !== undefined && isRetryableType(type) && { retryAfterMs: body.retryDelayMs }),
  });
}

/** Node and undici error codes for a connection that could not be made or did not survive. */
const NETWORK_CODES = new Set([
  // DNS
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  // connect
  'ECONNREFUSED',
  'ETIMEDOUT',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'UND_ERR_CONNECT_TIMEOUT',
  // socket
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  // the response stopped arriving or arrived cut short
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
  // our dispatcher was torn down under the call (worker shutdown): another attempt, maybe
  // on another worker, is exactly right
  'UND_ERR_DESTROYED',
  // TLS (`EPROTO` is what OpenSSL failures surface as on a plain socket)
  'EPROTO',
  'UND_ERR_PRX_TLS',
]);
const NETWORK_CODE_PREFIXES = ['ERR_TLS_', 'ERR_SSL_', 'CERT_', 'HPE_'];
const TLS_CERT_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
]);

/**
 * A thrown error from the transport: DNS, connect, TLS, socket. `network_error`, retried.
 * Anything else (a bug of ours, an invalid argument) is `unknown`, not retried: ten
 * retries of a TypeError is four minutes of looking broken.
 *
 * Callers must check their abort signal BEFORE calling this: undici reports an abort as
 * an error too, and classifying it here would turn a cancel into a retry.
 */
export function classifyNetworkError(provider: string, err: unknown, endpoint?: string): LlmError {
  if (LlmError.is(err)) return err;
  const found = findNetworkCode(err);
  const top = err instanceof Error ? err.message : String(err);
  return new LlmError({
    type: found ? 'network_error' : 'unknown',
    provider,
    detail: found ? `${found.code} ${found.message}`.trim() : top || 'unrecognised transport error',
    ...(endpoint !== undefined && { endpoint }),
    cause: err,
  });
}

/**
 * A 200 stream that ended without its terminal sentinel: a proxy idle cut, a
 * load-balancer timeout, an HTTP/2 GOAWAY. The partial answer must not pass for a
 * complete one, and a retry usually gets the whole one.
 */
export function truncatedStreamError(provider: string, sentinel: string, endpoint?: string): LlmError {
  return new LlmError({ type: 'network_error', provider, detail: `stream ended before ${sentinel}`, ...(endpoint !== undefined && { endpoint }) });
}

/**
 * A data frame that is not JSON. `network_error` (retried), not `unknown`: the three
 * providers emit machine-generated JSON, so a frame that does not parse was cut or mangled
 * on the way (a proxy rewriting or truncating the body, a buffer boundary bug in a
 * gateway). A fresh request almost always comes back clean, and the ladder bounds the cost
 * if it does not. Only the first characters are quoted: the frame may be model output.
 */
export function malformedFrameError(provider: string, frame: string, endpoint?: string): LlmError {
  const sample = frame.length > 80 ? `${frame.slice(0, 80)}…` : frame;
  return new LlmError({
    type: 'network_error',
    provider,
    detail: `malformed stream frame: ${JSON.stringify(sample)}`,
    ...(endpoint !== undefined && { endpoint }),
  });
}

// ---------------------------------------------------------------------------------------

interface BodyFacts {
  /** `type: message`, for the error message. */
  label: string;
  /** Every error type/code/status string the body carries, lower-cased. */
  names: string[];
  /** A numeric HTTP status the body states (OpenAI-compatible and Gemini errors carry one). */
  status?: number;
  /** Gemini's `google.rpc.RetryInfo.retryDelay`, its body-borne Retry-After. */
  retryDelayMs?: number;
  /** The whole body, lower-cased, for the wording rules. */
  text: string;
}

function typeForStatus(status: number, body: BodyFacts, serverStatedAWait: boolean): LlmErrorType {
  if (status === 401 || status === 403) return 'auth_error';
  // Gemini answers a bad key with 400 INVALID_ARGUMENT / API_KEY_INVALID.
  if (status === 400 && isBadKey(body)) return 'auth_error';
  if (status === 408) return 'timeout';
  if (status === 413) return 'context_overflow';
  if (status >= 400 && status < 500 && isContextOverflow(body)) return 'context_overflow';
  if (status === 402) return 'quota_exceeded';
  if ((status === 429 || status === 400) && isSpendLimit(body, serverStatedAWait)) return 'quota_exceeded';
  if (status === 429) return 'rate_limit';
  if (status === 400 && isContentBlocked(body)) return 'content_blocked';
  if (status >= 400 && status < 500) return 'invalid_request';
  if (status === 529) return 'overloaded';
  if (status >= 500 && status < 600) return 'server_error';
  return 'unknown';
}

function isBadKey(body: BodyFacts): boolean {
  return body.names.includes('api_key_invalid') || /api key (not valid|expired)|invalid api key|incorrect api key/.test(body.text);
}

const CONTEXT_OVERFLOW_WORDING: readonly RegExp[] = [
  /prompt is too long/, // Anthropic
  /context_length_exceeded/, // OpenAI code
  /maximum context length/, // OpenAI message, vLLM
  /input token count[^.]*exceeds the maximum/, // Gemini
  /exceeds? (the )?(available )?context (limit|window|size|length)/, // Anthropic max_tokens + input, llama.cpp, OpenAI Responses
  // OpenAI's 429 for ONE request above the per-minute token limit: no wait ever admits
  // it, only a smaller request does, which is what a context overflow asks for.
  /request too large/,
];

function isContextOverflow(body: BodyFacts): boolean {
  return body.names.includes('context_length_exceeded') || CONTEXT_OVERFLOW_WORDING.some((re) => re.test(body.text));
}

/**
 * A prompt the provider's filters refused before the model saw it: Azure OpenAI's
 * `content_filter` 400, OpenAI's `content_policy_violation`. Asking again is refused again.
 */
function isContentBlocked(body: BodyFacts): boolean {
  return body.names.includes('content_filter') || body.names.includes('content_policy_violation');
}

const SPEND_LIMIT_WORDING: readonly RegExp[] = [
  /exceeded your current quota/,
  /billing/,
  /credit balance/,
  /insufficient[ _](quota|credits?|funds|balance)/,
  /out of credits/,
  /spend(ing)? (limit|cap)/,
  /usage limits?/,
  /payment required/,
];

/**
 * A limit that waiting out the ladder (minutes) does not lift: an empty prepaid balance,
 * a monthly spend cap. OpenAI's `insufficient_quota` and Anthropic's `billing_error` say
 * so by code and are believed outright. Wording alone is believed only when the server
 * stated no wait, because Gemini's ordinary per-minute 429 reads "You exceeded your
 * current quota, please check your plan and billing details" and then says "retry in
 * 39 s": a server that names a wait thinks waiting cures it, and it knows better than a
 * regex.
 */
function isSpendLimit(body: BodyFacts, serverStatedAWait: boolean): boolean {
  if (body.names.includes('insufficient_quota') || body.names.includes('billing_error')) return true;
  if (serverStatedAWait) return false;
  // An explicit rate-limit code outranks wording too: OpenAI's free-tier rate limit says
  // "add a payment method … /account/billing" and is cured by waiting a few seconds.
  if (body.names.some((n) => RATE_LIMIT_NAMES.has(n))) return false;
  return SPEND_LIMIT_WORDING.some((re) => re.test(body.text));
}

const RATE_LIMIT_NAMES = new Set(['rate_limit_exceeded', 'rate_limit_error']);

/**
 * Error names as the providers spell them in bodies and in-stream error events, mapped to
 * the HTTP status they stand for, so an in-stream error gets exactly the HTTP rules.
 */
const STATUS_FOR_ERROR_NAME: Record<string, number> = {
  // Anthropic `error.type`
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 408,
  overloaded_error: 529,
  // OpenAI `error.type` / `error.code` (and compatible servers)
  server_error: 500,
  rate_limit_exceeded: 429,
  insufficient_quota: 429,
  context_length_exceeded: 400,
  invalid_api_key: 401,
  model_not_found: 404,
  // Gemini `error.status` (google.rpc.Code names)
  invalid_argument: 400,
  failed_precondition: 400,
  out_of_range: 400,
  unauthenticated: 401,
  permission_denied: 403,
  not_found: 404,
  resource_exhausted: 429,
  cancelled: 499,
  internal: 500,
  unknown: 500,
  unavailable: 503,
  deadline_exceeded: 504,
};

function statusForErrorName(names: readonly string[]): number | undefined {
  for (const name of names) {
    const status = STATUS_FOR_ERROR_NAME[name];
    if (status !== undefined) return status;
  }
  return undefined;
}

/**
 * Pulls the provider's error type and message out of any of the shapes in use:
 * Anthropic `{type:"error", error:{type, message}}`, OpenAI `{error:{message, type,
 * code}}`, Gemini `{error:{code, message, status, details}}` (sometimes wrapped in an
 * array), Ollama `{error:"text"}`, or not JSON at all.
 */
function describeBody(bodyText: string): BodyFacts {
  const text = bodyText.toLowerCase();
  let parsed: unknown;
  try {
    parsed = JSON.parse(bodyText);
  } catch {
    return { label: clip(bodyText.replace(/\s+/g, ' ').trim()), names: [], text };
  }
  if (Array.isArray(parsed)) parsed = parsed[0];
  const root = asRecord(parsed);
  const err = asRecord(root?.error) ?? root;
  const message = typeof root?.error === 'string' ? root.error : str(err?.message);
  const spelled = [err?.code, err?.type, err?.status].filter((v): v is string => typeof v === 'string' && v !== '');
  const names = spelled.map((v) => v.toLowerCase());
  let retryDelayMs: number | undefined;
  for (const d of Array.isArray(err?.details) ? err.details : []) {
    const detail = asRecord(d);
    const reason = str(detail?.reason);
    if (reason) names.push(reason.toLowerCase());
    // google.protobuf.Duration in JSON: decimal seconds with an `s` suffix ("39s", "0.5s").
    const delay = str(detail?.retryDelay);
    if (delay) retryDelayMs = maxDefined(retryDelayMs, parseGoDurationMs(delay));
  }
  const numeric = typeof err?.code === 'number' ? err.code : typeof err?.status === 'number' ? err.status : undefined;
  const status = numeric !== undefined && Number.isInteger(numeric) && numeric >= 100 && numeric < 600 ? numeric : undefined;
  const label = clip([spelled[0], message].filter(Boolean).join(': ')) || clip(bodyText.replace(/\s+/g, ' ').trim());
  return {
    label,
    names,
    text,
    ...(status !== undefined && { status }),
    ...(retryDelayMs !== undefined && { retryDelayMs: Math.ceil(retryDelayMs) }),
  };
}

function findNetworkCode(err: unknown, depth = 0): { code: string; message: string } | undefined {
  if (depth > 6 || typeof err !== 'object' || err === null) return undefined;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === 'string' && isNetworkCode(e.code)) return { code: e.code, message: typeof e.message === 'string' ? e.message : '' };
  // Node's happy-eyeballs connect reports one AggregateError for all addresses tried.
  for (const inner of Array.isArray(e.errors) ? e.errors : []) {
    const found = findNetworkCode(inner, depth + 1);
    if (found) return found;
  }
  return findNetworkCode(e.cause, depth + 1);
}

function isNetworkCode(code: string): boolean {
  return NETWORK_CODES.has(code) || TLS_CERT_CODES.has(code) || NETWORK_CODE_PREFIXES.some((p) => code.startsWith(p));
}

function asRecord(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function clip(s: string): string {
  return s.length > MAX_DETAIL_CHARS ? `${s.slice(0, MAX_DETAIL_CHARS)}…` : s;
}

function maxDefined(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.max(a, b);
}

function safeStringify(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}
