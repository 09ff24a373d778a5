import { z } from 'zod';

/** Bounds of the two turn guards, read by the session's schema and the client's flags alike. */
export const TURN_LIMITS = {
  /** A turn's wall-clock limit: at least a second, at most a day (a turn cannot continue as new in its middle). */
  turnTimeoutMs: { min: 1_000, max: 24 * 3600_000 },
  /** Identical tool calls in a row before the next one is refused. */
  maxRepeats: { min: 1, max: 100 },
} as const;

const { turnTimeoutMs, maxRepeats } = TURN_LIMITS;
const timeoutRange = `from ${turnTimeoutMs.min / 1000} s to ${turnTimeoutMs.max / 3600_000} h`;

export const TurnTimeoutSchema = z
  .number({ error: `must be a duration ${timeoutRange}, such as 90s, 10m or 1h` })
  .int({ error: `must be a duration ${timeoutRange}, such as 90s, 10m or 1h` })
  .min(turnTimeoutMs.min, { error: `must be a duration ${timeoutRange}, such as 90s, 10m or 1h` })
  .max(turnTimeoutMs.max, { error: `must be a duration ${timeoutRange}, such as 90s, 10m or 1h` });

const repeatsMessage = `must be a whole number from ${maxRepeats.min} to ${maxRepeats.max}`;
export const MaxRepeatsSchema = z.number({ error: repeatsMessage }).int({ error: repeatsMessage }).min(maxRepeats.min, { error: repeatsMessage }).max(maxRepeats.max, { error: repeatsMessage });

/** `90`, `90s`, `10m`, `1h`, `1.5h` as milliseconds; anything else NaN, which the schema refuses. */
export function durationMs(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(text);
  if (!match) return Number.NaN;
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[(match[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  return Math.round(Number(match[1]) * unit);
}
