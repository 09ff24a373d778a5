import { headerValue, headerValues, type HeaderSource } from './header-values';

/**
 * The wait the server asked for, in ms, read from every header the three providers (and
 * the common gateways) use to say it. `undefined` when none states a usable wait.
 *
 * WHICH HEADER WINS: the LARGEST stated wait. Every one of these is a floor (the earliest
 * moment the server expects a retry to succeed) and the server may be tracking more than
 * one limit at once, so retrying after the smaller wait only earns another 429 and burns
 * an attempt of the ladder. `decideRetry` then raises the jittered backoff to this floor,
 * never lowers it, and surfaces a wait above the policy's ceiling instead of sleeping on it.
 *
 * THE RESET HEADERS ONLY COUNT FOR A LIMIT THAT RAN OUT. Anthropic's
 * `anthropic-ratelimit-*-reset` and OpenAI's `x-ratelimit-reset-*` ride on every
 * response, successes and 500s included, and say when a bucket is FULLY replenished,
 * which for a daily bucket is hours away. Taking them at face value would turn a 500, or
 * a 429 on a different limit, into "server asked for 6 hours" and stop the ladder. So a
 * reset is ignored when its sibling `-remaining` header says that bucket still has room;
 * when there is no `-remaining` header the reset is taken as stated.
 *
 * GARBAGE IS IGNORED, NEVER FATAL: a header we can not parse states no wait. A negative
 * number is garbage. An instant in the PAST is not garbage but a statement that the limit
 * has already reset, so it counts as 0 ms (usually our clock running ahead of theirs).
 */
export function serverStatedWaitMs(headers: HeaderSource | undefined, nowMs: number): number | undefined {
  const waits: number[] = [];
  const push = (ms: number | undefined) => {
    if (ms !== undefined) waits.push(ms);
  };

  // RFC 9110: delay-seconds or an HTTP-date. The standard one, sent by all three on 429/503.
  for (const v of headerValues(headers, 'retry-after')) push(parseSeconds(v) ?? parseHttpDateWait(v, nowMs));
  // OpenAI's SDKs read this finer-grained form first; some gateways send it.
  for (const v of headerValues(headers, 'retry-after-ms')) push(parseNonNegativeNumber(v));
  // Seconds until the limiter resets (Cloudflare-style gateways, several compatible servers).
  for (const v of headerValues(headers, 'x-ratelimit-reset-after')) push(parseSeconds(v));

  // Anthropic: RFC 3339 instants.
  for (const bucket of ['requests', 'input-tokens']) {
    if (bucketHasRoom(headers, `anthropic-ratelimit-${bucket}-remaining`)) continue;
    for (const v of headerValues(headers, `anthropic-ratelimit-${bucket}-reset`)) push(parseRfc3339Wait(v, nowMs));
  }
  // OpenAI: Go-style durations.
  for (const bucket of ['requests', 'tokens']) {
    if (bucketHasRoom(headers, `x-ratelimit-remaining-${bucket}`)) continue;
    for (const v of headerValues(headers, `x-ratelimit-reset-${bucket}`)) push(parseGoDurationMs(v));
  }

  if (waits.length === 0) return undefined;
  return Math.ceil(Math.max(...waits));
}

function bucketHasRoom(headers: HeaderSource | undefined, remainingHeader: string): boolean {
  const v = headerValue(headers, remainingHeader);
  if (v === undefined) return false;
  const n = parseNonNegativeNumber(v);
  return n !== undefined && n > 0;
}

const DECIMAL = /^\+?(\d+(\.\d*)?|\.\d+)$/;

export function parseNonNegativeNumber(v: string): number | undefined {
  if (!DECIMAL.test(v)) return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

/** Seconds, integer or decimal (RFC 9110 says integer; decimals are common and harmless). */
function parseSeconds(v: string): number | undefined {
  const n = parseNonNegativeNumber(v);
  return n === undefined ? undefined : n * 1000;
}

/**
 * IMF-fixdate (`Wed, 21 Oct 2015 07:28:00 GMT`), RFC 850 and asctime, the three forms
 * RFC 9110 allows. Checked by shape first: `Date.parse('1')` is the year 2001, and a
 * lenient parser would read any number as an instant.
 */
function parseHttpDateWait(v: string, nowMs: number): number | undefined {
  let t: number;
  if (/^[A-Za-z]{3,9}, [0-9A-Za-z -]+ \d{2}:\d{2}:\d{2} GMT$/.test(v)) t = Date.parse(v);
  else if (/^[A-Za-z]{3} [A-Za-z]{3} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/.test(v)) t = Date.parse(`${v} GMT`);
  else return undefined;
  return Number.isNaN(t) ? undefined : Math.max(0, t - nowMs);
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

export function parseRfc3339Wait(v: string, nowMs: number): number | undefined {
  if (!RFC3339.test(v)) return undefined;
  const t = Date.parse(v.replace(' ', 'T'));
  return Number.isNaN(t) ? undefined : Math.max(0, t - nowMs);
}

const GO_UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  'µs': 1e-3, // U+00B5 micro sign
  'μs': 1e-3, // U+03BC Greek mu; Go accepts both
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};
const GO_DURATION = /^\+?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$/;
const GO_SEGMENT = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g;

/**
 * Go's `time.Duration` string (`6m0s`, `1.5s`, `20ms`, `1h2m3.5s`), which is what
 * OpenAI sends. A bare number is read as seconds, as some compatible servers send it.
 * A negative duration is garbage.
 */
export function parseGoDurationMs(v: string): number | undefined {
  if (v === '0' || v === '+0') return 0;
  const bare = parseSeconds(v);
  if (bare !== undefined) return bare;
  if (!GO_DURATION.test(v)) return undefined;
  let total = 0;
  for (const m of v.matchAll(GO_SEGMENT)) total += Number(m[1]) * (GO_UNIT_MS[m[2]!] ?? Number.NaN);
  return Number.isFinite(total) ? total : undefined;
}
