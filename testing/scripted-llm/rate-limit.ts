import { z } from 'zod';

/**
 * The scripted LLM's rate limits: per model (or `*`, every model without its own), a
 * sliding window of `windowMs` on requests, input tokens (the request's own count: one per
 * four JSON characters, context-window.ts) and output tokens (what its replies report).
 * A request above any of them is answered with the provider's own 429 (rate-limit-wire.ts)
 * and recorded as `rate_limited`; it plays no scripted reply and counts for nothing, as a
 * refused request costs nothing at a provider. Every model is counted on its own, `*`
 * included: a provider's limits are per model.
 */

const Count = z.number().int().positive();

export const RateLimitSchema = z
  .strictObject({
    requests: Count.optional(),
    inputTokens: Count.optional(),
    outputTokens: Count.optional(),
    /** The window every figure is counted in: 60 000 is "per minute"; a test scales it down. */
    windowMs: z.number().int().positive().max(3_600_000),
  })
  .refine((limit) => limit.requests !== undefined || limit.inputTokens !== undefined || limit.outputTokens !== undefined, {
    message: 'name at least one of requests, inputTokens, outputTokens',
  });
export type RateLimit = z.infer<typeof RateLimitSchema>;

/** Every model without a limit of its own. */
export const EVERY_MODEL = '*';

/** Validates a limit once, at the boundary, in one line naming the model and the field. */
export function checkedRateLimit(model: string, limit: unknown): RateLimit {
  const parsed = RateLimitSchema.safeParse(limit);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.length ? `${issue.path.join('.')}: ` : '';
  throw new Error(`scripted LLM: the rate limit for model "${model}": ${field}${issue?.message ?? 'invalid'}`);
}

export type RateBucket = 'requests' | 'input_tokens' | 'output_tokens';

/** Where one bucket stands after a request was counted (or refused): what the provider's headers say. */
export interface BucketState {
  bucket: RateBucket;
  limit: number;
  remaining: number;
  /** Epoch ms when the bucket is full again: the newest counted request leaves the window. */
  resetAt: number;
}

export type Admission =
  /** No limit applies to the model. */
  | { limited: false }
  /** `countOutput`: what the request's reply reports as its output, once the server has chosen it. */
  | { limited: true; admitted: true; buckets: BucketState[]; countOutput(tokens: number): void }
  /** `retryAfterMs`: when the request would fit, if nothing else arrived (a whole window for one that never fits). */
  | { limited: true; admitted: false; bucket: RateBucket; retryAfterMs: number; buckets: BucketState[]; limit: RateLimit };

interface Entry {
  at: number;
  requests: number;
  input_tokens: number;
  output_tokens: number;
}

const FIGURE: Record<RateBucket, 'requests' | 'inputTokens' | 'outputTokens'> = {
  requests: 'requests',
  input_tokens: 'inputTokens',
  output_tokens: 'outputTokens',
};

export class RateLimits {
  private readonly limits = new Map<string, RateLimit>();
  private readonly counted = new Map<string, Entry[]>();

  /** `null` removes the model's own limit (the `*` limit, if any, applies again). */
  set(model: string, limit: RateLimit | null): void {
    if (limit === null) this.limits.delete(model);
    else this.limits.set(model, checkedRateLimit(model, limit));
  }

  of(model: string): RateLimit | undefined {
    return this.limits.get(model) ?? this.limits.get(EVERY_MODEL);
  }

  /**
   * Counts a request arriving at `at` with `inputTokens`, or refuses it. Output tokens are
   * checked as used so far (a request's own output is not known before it is answered, as
   * at a provider), and counted when the admitted request's reply is known.
   */
  admit(model: string, at: number, inputTokens: number): Admission {
    const limit = this.of(model);
    if (!limit) return { limited: false };
    const entries = this.inWindow(model, at, limit.windowMs);
    const asked: Entry = { at, requests: 1, input_tokens: inputTokens, output_tokens: 0 };
    for (const bucket of ['requests', 'input_tokens', 'output_tokens'] as const) {
      const max = limit[FIGURE[bucket]];
      if (max === undefined) continue;
      const used = sum(entries, bucket);
      const fits = bucket === 'output_tokens' ? used < max : used + asked[bucket] <= max;
      if (!fits) {
        return { limited: true, admitted: false, bucket, retryAfterMs: waitUntilFits(entries, bucket, asked[bucket], max, at, limit.windowMs), buckets: states(entries, limit, at), limit };
      }
    }
    entries.push(asked);
    return {
      limited: true,
      admitted: true,
      buckets: states(entries, limit, at),
      countOutput: (tokens) => {
        asked.output_tokens = tokens;
      },
    };
  }

  /** The model's requests still in the window at `at`, oldest first; older ones are dropped. */
  private inWindow(model: string, at: number, windowMs: number): Entry[] {
    const entries = (this.counted.get(model) ?? []).filter((e) => e.at > at - windowMs);
    this.counted.set(model, entries);
    return entries;
  }
}

function sum(entries: readonly Entry[], bucket: RateBucket): number {
  return entries.reduce((total, e) => total + e[bucket], 0);
}

function states(entries: readonly Entry[], limit: RateLimit, at: number): BucketState[] {
  const newest = entries.at(-1)?.at ?? at;
  return (['requests', 'input_tokens', 'output_tokens'] as const).flatMap((bucket) => {
    const max = limit[FIGURE[bucket]];
    return max === undefined ? [] : [{ bucket, limit: max, remaining: Math.max(0, max - sum(entries, bucket)), resetAt: newest + limit.windowMs }];
  });
}

/** How long until the oldest requests have left the window so that `need` more fit (output: until any room is left). */
function waitUntilFits(entries: readonly Entry[], bucket: RateBucket, need: number, max: number, at: number, windowMs: number): number {
  let used = sum(entries, bucket);
  const fits = () => (bucket === 'output_tokens' ? used < max : used + need <= max);
  for (const e of entries) {
    used -= e[bucket];
    if (fits()) return Math.max(1, e.at + windowMs - at);
  }
  return windowMs;
}
