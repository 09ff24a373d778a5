/**
 * The most any window of `windowMs` held of a request log, by arrival: the figure a test
 * compares with an allowance to say "never exceeded". A window is `(t - windowMs, t]`, as the
 * scripted LLM's own rate limits count it (rate-limit.ts), so a request leaves the window
 * exactly `windowMs` after it arrived.
 */
export interface WindowPeak {
  requests: number;
  /** Input tokens: each request's `tokens` (JSON characters / 4). */
  tokens: number;
}

export function windowPeak(requests: ReadonlyArray<{ at: number; tokens: number }>, windowMs: number): WindowPeak {
  const sorted = [...requests].sort((a, b) => a.at - b.at);
  let peak: WindowPeak = { requests: 0, tokens: 0 };
  let start = 0;
  let tokens = 0;
  for (const [end, request] of sorted.entries()) {
    tokens += request.tokens;
    while (sorted[start]!.at <= request.at - windowMs) tokens -= sorted[start++]!.tokens;
    peak = { requests: Math.max(peak.requests, end - start + 1), tokens: Math.max(peak.tokens, tokens) };
  }
  return peak;
}
