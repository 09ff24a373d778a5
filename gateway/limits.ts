/**
 * Per-key request limits: a token bucket per key, `requestsPerMinute` deep, refilled
 * evenly over the minute. A key may burst up to its whole minute at once and then goes
 * at the refill rate; a request beyond it is refused with the seconds until the next one
 * is allowed (the 429's Retry-After). The buckets live in this gateway's memory: several
 * gateways each allow a key its rate.
 */
export const DEFAULT_REQUESTS_PER_MINUTE = 600;

export interface RateLimiter {
  /** Takes one request of the key's allowance: 0 when allowed, else the whole seconds to wait. */
  take(keyId: string, requestsPerMinute: number): number;
}

export function createRateLimiter(now: () => number = Date.now): RateLimiter {
  const buckets = new Map<string, { tokens: number; at: number; capacity: number }>();
  return {
    take(keyId, requestsPerMinute) {
      const t = now();
      const perMs = requestsPerMinute / 60_000;
      const bucket = buckets.get(keyId) ?? { tokens: requestsPerMinute, at: t, capacity: requestsPerMinute };
      // A keys file reloaded with another rate takes effect at once, without carrying more than the new depth.
      bucket.capacity = requestsPerMinute;
      bucket.tokens = Math.min(bucket.capacity, bucket.tokens + (t - bucket.at) * perMs);
      bucket.at = t;
      buckets.set(keyId, bucket);
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return 0;
      }
      return Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000));
    },
  };
}
