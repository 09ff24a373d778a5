import type { BucketState, RateBucket, RateLimit } from './rate-limit';
import type { StatusReply } from './script';
import type { Provider } from './wire/dialect';

/**
 * How each provider says where its rate limits stand, on every response, and how it refuses
 * a request above one (rate-limit.ts decides which):
 * - Anthropic: `anthropic-ratelimit-{requests,input-tokens,output-tokens}-{limit,remaining,reset}`
 *   (reset an RFC 3339 instant), and on the 429 `retry-after` in whole seconds with a
 *   `rate_limit_error` body.
 * - OpenAI: `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` (reset a Go duration;
 *   its one token bucket is the input tokens', it has no output bucket), and a 429
 *   `rate_limit_exceeded` body without `retry-after`, as the real API answers.
 * - Gemini: no rate-limit headers at all; the 429 is `RESOURCE_EXHAUSTED` with a
 *   `google.rpc.QuotaFailure` and a `google.rpc.RetryInfo` (`retryDelay: "8s"`) in its body.
 */

const ANTHROPIC_NAME: Record<RateBucket, string> = { requests: 'requests', input_tokens: 'input-tokens', output_tokens: 'output-tokens' };
const OPENAI_NAME: Partial<Record<RateBucket, string>> = { requests: 'requests', input_tokens: 'tokens' };

export function rateLimitHeaders(provider: Provider, buckets: readonly BucketState[], now: number): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const b of buckets) {
    if (provider === 'anthropic') {
      const name = `anthropic-ratelimit-${ANTHROPIC_NAME[b.bucket]}`;
      headers[`${name}-limit`] = String(b.limit);
      headers[`${name}-remaining`] = String(b.remaining);
      headers[`${name}-reset`] = new Date(Math.ceil(b.resetAt / 1000) * 1000).toISOString().replace('.000Z', 'Z');
    } else if (provider === 'openai') {
      const name = OPENAI_NAME[b.bucket];
      if (name === undefined) continue;
      headers[`x-ratelimit-limit-${name}`] = String(b.limit);
      headers[`x-ratelimit-remaining-${name}`] = String(b.remaining);
      headers[`x-ratelimit-reset-${name}`] = goDuration(Math.max(0, b.resetAt - now));
    }
  }
  return headers;
}

const PER_MINUTE: Record<RateBucket, string> = { requests: 'requests', input_tokens: 'input tokens', output_tokens: 'output tokens' };

/** The provider's 429 for a request above `bucket`, which fits again in `retryAfterMs`. */
export function rateLimitedReply(
  provider: Provider,
  model: string,
  refused: { bucket: RateBucket; retryAfterMs: number; buckets: readonly BucketState[]; limit: RateLimit },
  now: number,
): StatusReply {
  const { bucket, retryAfterMs, buckets, limit } = refused;
  const max = limit[bucket === 'requests' ? 'requests' : bucket === 'input_tokens' ? 'inputTokens' : 'outputTokens'];
  const per = `per ${limit.windowMs === 60_000 ? 'minute' : `${limit.windowMs / 1000} s`}`;
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  const headers = rateLimitHeaders(provider, buckets, now);
  if (provider === 'anthropic') {
    return {
      kind: 'status',
      status: 429,
      headers: { ...headers, 'retry-after': String(seconds) },
      errorType: 'rate_limit_error',
      message: `This request would exceed the rate limit for your organization of ${max} ${PER_MINUTE[bucket]} ${per} for ${model}. Please try again later.`,
    };
  }
  if (provider === 'openai') {
    const unit = bucket === 'requests' ? 'requests' : 'tokens';
    const used = buckets.find((b) => b.bucket === bucket);
    return {
      kind: 'status',
      status: 429,
      headers,
      body: {
        error: {
          message: `Rate limit reached for ${model} in organization org-scripted on ${unit} ${per}: Limit ${max}, Used ${used === undefined ? 0 : used.limit - used.remaining}. Please try again in ${goDuration(retryAfterMs)}.`,
          type: unit,
          param: null,
          code: 'rate_limit_exceeded',
        },
      },
    };
  }
  return {
    kind: 'status',
    status: 429,
    body: {
      error: {
        code: 429,
        message: 'Resource has been exhausted (e.g. check quota).',
        status: 'RESOURCE_EXHAUSTED',
        details: [
          {
            '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
            violations: [{ quotaMetric: `generativelanguage.googleapis.com/generate_content_${bucket === 'requests' ? 'requests' : bucket === 'input_tokens' ? 'input_token_count' : 'output_token_count'}`, quotaDimensions: { model }, quotaValue: String(max) }],
          },
          { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${seconds}s` },
        ],
      },
    },
  };
}

/** OpenAI's reset form: `1.234s`, `250ms`. */
function goDuration(ms: number): string {
  return ms < 1000 ? `${Math.ceil(ms)}ms` : `${(ms / 1000).toFixed(3).replace(/\.?0+$/, '')}s`;
}
