import { isRetryableLlmErrorType, type LlmErrorType } from '../../contracts/errors';

/**
 * Registered in the global symbol registry, so two copies of this module (a dual
 * install, vitest's module isolation, a bundled worker next to an unbundled test)
 * still recognise each other's errors. `instanceof` only sees its own copy of the class
 * and would silently classify a rate limit as "not an LLM error".
 */
const BRAND = Symbol.for('durable-agent-worker.LlmError');

export interface LlmErrorInit {
  type: LlmErrorType;
  provider: string;
  /** What went wrong, in the provider's words when it gave any. Secrets are redacted here. */
  detail: string;
  /** `METHOD /path`, e.g. `POST /v1/messages`. Never a query string, never a header. */
  endpoint?: string;
  status?: number;
  /** The wait the server asked for, when it stated one. */
  retryAfterMs?: number;
  cause?: unknown;
}

/**
 * One failed LLM call, typed by the stable `type` string shared with the retry policy,
 * the UI and the tests. `retryable` is derived from `type`, never passed in, so the two
 * can not disagree (a `rate_limit` that is "not retryable" would be a bug nobody sees
 * until the provider has a bad afternoon).
 *
 * The message reads `anthropic POST /v1/messages → 529 overloaded_error: Overloaded`.
 * It goes into the Temporal UI, the workflow history and the logs, so it carries no
 * header and no query string (where keys live) and key-shaped strings in provider
 * bodies are masked (OpenAI echoes a masked key in its 401 text).
 */
export class LlmError extends Error {
  readonly type: LlmErrorType;
  readonly retryable: boolean;
  readonly provider: string;
  // `declare`: with ES2022 class fields an undeclared optional field would exist as an
  // own `undefined` property, and `'retryAfterMs' in e` would lie.
  declare readonly status?: number;
  declare readonly retryAfterMs?: number;
  declare readonly endpoint?: string;

  constructor(init: LlmErrorInit) {
    super(formatMessage(init), init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'LlmError';
    this.type = init.type;
    this.retryable = isRetryableLlmErrorType(init.type);
    this.provider = init.provider;
    if (init.status !== undefined) this.status = init.status;
    if (init.retryAfterMs !== undefined) this.retryAfterMs = init.retryAfterMs;
    if (init.endpoint !== undefined) this.endpoint = init.endpoint;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** Brand check that works across module copies; see {@link BRAND}. */
  static is(e: unknown): e is LlmError {
    return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[BRAND] === true;
  }
}

function formatMessage(init: LlmErrorInit): string {
  const where = init.endpoint ? `${init.provider} ${init.endpoint}` : init.provider;
  const what = init.status !== undefined ? `${init.status} ${redactSecrets(init.detail)}` : `${init.type}: ${redactSecrets(init.detail)}`;
  return `${where} → ${what}`;
}

/**
 * `METHOD /path` for a URL: the path only. The query string is dropped because that is
 * where keys travel on APIs that accept them there, and the host is dropped because a
 * base URL may carry `user:password@`.
 */
export function endpointLabel(method: string, url: string): string {
  try {
    return `${method} ${new URL(url).pathname}`;
  } catch {
    return method;
  }
}

/**
 * Masks strings shaped like the three providers' keys. Defence in depth: we never put a
 * key into a message ourselves, but provider error bodies are quoted into messages and
 * some echo part of the key back.
 */
const SECRET_PATTERNS: readonly RegExp[] = [
  /\bsk-[A-Za-z0-9_*.-]{8,}/g, // OpenAI and Anthropic (`sk-ant-…`), including masked echoes
  /\bAIza[0-9A-Za-z_-]{20,}/g, // Google API keys
  /\b(Bearer)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
];

/**
 * Shorter values are the placeholders keyless local servers are given (`EMPTY`,
 * `ollama`, `x`), not secrets: masking every `x` would garble the message and hide nothing.
 * It is also the shortest start of a key that is masked where a clipped message cut one off.
 */
const MIN_SECRET_CHARS = 8;
const REDACTED = '[redacted]';

/**
 * Masks key-shaped strings and, beyond what any pattern knows (an Azure key is 32 hex
 * digits, a vLLM token anything at all), every value in `secrets`: the keys the worker is
 * configured with. A key's start of at least {@link MIN_SECRET_CHARS} characters is
 * masked too, wherever it stands, because provider messages are clipped before they are
 * quoted and the clip can fall inside an echoed key.
 */
export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= MIN_SECRET_CHARS) out = maskRuns(out, secret);
  }
  for (const pattern of SECRET_PATTERNS) out = out.replace(pattern, (m, bearer?: string) => (typeof bearer === 'string' ? `${bearer} ${REDACTED}` : REDACTED));
  return out;
}

/** Each place `text` repeats the start of `secret` (the whole of it or its first characters), masked. */
function maskRuns(text: string, secret: string): string {
  const start = secret.slice(0, MIN_SECRET_CHARS);
  let out = '';
  let from = 0;
  for (let at = text.indexOf(start); at >= 0; at = text.indexOf(start, from)) {
    let end = at + start.length;
    while (end < text.length && end - at < secret.length && text[end] === secret[end - at]) end++;
    out += text.slice(from, at) + REDACTED;
    from = end;
  }
  return out + text.slice(from);
}
