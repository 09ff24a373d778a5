import type { ObservedBucket, ObservedLimits } from '../../contracts/fleet-limits';
import { headerValue, type HeaderSource } from './header-values';
import { parseGoDurationMs, parseNonNegativeNumber, parseRfc3339Wait } from './retry-after';

/**
 * What a response's rate-limit headers say of the account's buckets, for the fleet
 * limiter to learn from (docs/fleet-limits.md). Read on every response, successes too:
 * that is where a provider states its limits before they run out.
 *
 * - Anthropic: `anthropic-ratelimit-{requests,input-tokens,output-tokens}-{limit,remaining,reset}`,
 *   the reset an RFC 3339 instant.
 * - OpenAI: `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`, the reset a Go
 *   duration. Its one token bucket counts input and output together; it is reported as
 *   input, the bucket a request's size is held to before it is sent.
 *
 * A header that does not parse is left out, never fatal, as in retry-after.ts; Gemini
 * sends none of these, and a response without any gives `undefined`.
 */
export function observedLimits(headers: HeaderSource | undefined, nowMs: number): ObservedLimits | undefined {
  const rfc3339 = (v: string) => at(parseRfc3339Wait(v, nowMs), nowMs);
  const goDuration = (v: string) => at(parseGoDurationMs(v), nowMs);
  const observed: ObservedLimits = {};
  const requests = bucket(headers, 'anthropic-ratelimit-requests-', '', rfc3339) ?? bucket(headers, 'x-ratelimit-', '-requests', goDuration);
  const inputTokens = bucket(headers, 'anthropic-ratelimit-input-tokens-', '', rfc3339) ?? bucket(headers, 'x-ratelimit-', '-tokens', goDuration);
  const outputTokens = bucket(headers, 'anthropic-ratelimit-output-tokens-', '', rfc3339);
  if (requests) observed.requests = requests;
  if (inputTokens) observed.inputTokens = inputTokens;
  if (outputTokens) observed.outputTokens = outputTokens;
  return Object.keys(observed).length > 0 ? observed : undefined;
}

/** `prefix + limit|remaining|reset + suffix`: Anthropic puts the field last, OpenAI in the middle. */
function bucket(headers: HeaderSource | undefined, prefix: string, suffix: string, resetAt: (v: string) => number | undefined): ObservedBucket | undefined {
  const read = (field: string) => headerValue(headers, `${prefix}${field}${suffix}`);
  const limit = wholeNumber(read('limit'));
  const remaining = wholeNumber(read('remaining'));
  const reset = read('reset');
  const resetMs = reset === undefined ? undefined : resetAt(reset);
  const found: ObservedBucket = {
    ...(limit === undefined ? {} : { limit }),
    ...(remaining === undefined ? {} : { remaining }),
    ...(resetMs === undefined ? {} : { resetAt: resetMs }),
  };
  return Object.keys(found).length > 0 ? found : undefined;
}

function wholeNumber(v: string | undefined): number | undefined {
  const n = v === undefined ? undefined : parseNonNegativeNumber(v);
  return n === undefined ? undefined : Math.floor(n);
}

function at(waitMs: number | undefined, nowMs: number): number | undefined {
  return waitMs === undefined ? undefined : nowMs + Math.ceil(waitMs);
}
