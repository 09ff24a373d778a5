import { CancellationScope, sleep } from '@temporalio/workflow';
import { z } from 'zod';
import { WORKFLOW_ERROR_TYPES } from './errors';
import { isCancellation } from './failure';
import type { ToolCall } from './messages';
import type { FailureSummary, SessionEvent } from './session-log';
import type { ToolOutcome } from './tools/tool-outcome';

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

/**
 * Runs a turn under its wall-clock limit: a durable timer that, when it fires, cancels
 * the turn's scope, so the step in hand is cancelled and compensation answers its calls,
 * as for a `cancel`. `timedOut()` then tells the turn to report `turn_timeout` rather than
 * `cancelled`. Without a limit nothing is scheduled: such a session issues the commands it
 * always did.
 */
export async function withTurnTimeout<T>(timeoutMs: number | undefined, turnScope: CancellationScope, run: (timedOut: () => FailureSummary | undefined) => Promise<T>): Promise<T> {
  if (timeoutMs === undefined) return run(() => undefined);
  let fired = false;
  const timerScope = new CancellationScope();
  const timer = timerScope
    .run(() => sleep(timeoutMs, { summary: `turn timeout ${timeoutMs / 1000} s` }))
    .then(
      () => {
        fired = true;
        turnScope.cancel();
      },
      (error: unknown) => {
        if (!isCancellation(error)) throw error;
      },
    );
  try {
    return await run(() => (fired ? { type: WORKFLOW_ERROR_TYPES.turnTimeout, message: `the turn ran longer than its ${timeoutMs / 1000} s limit (--turn-timeout) and was stopped` } : undefined));
  } finally {
    timerScope.cancel();
    await timer;
  }
}

/** A tool call's identity for the repeat guard: its name and its arguments, keys sorted. */
const callKey = (call: Pick<ToolCall, 'name' | 'input'>) => `${call.name} ${stableJson(call.input)}`;

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The repeat guard. `call` belongs to the newest assistant message of `events`; when the
 * `maxRepeats` calls the model made just before it in this turn were this same call, it is
 * not run again, and the model reads why. A model that loops on one call gets the same
 * answer each time it tries; any other call breaks the run.
 */
export function repeatedCallOutcome(events: readonly SessionEvent[], call: ToolCall, limit: number | undefined): ToolOutcome | undefined {
  if (limit === undefined) return undefined;
  let newest: Extract<SessionEvent, { type: 'assistant' }> | undefined;
  for (let i = events.length - 1; i >= 0 && !newest; i--) {
    const e = events[i];
    if (e?.type === 'assistant') newest = e;
  }
  if (!newest) return undefined;
  const earlier: ToolCall[] = [];
  for (const e of events) {
    if (e.type !== 'assistant' || e.turn !== newest.turn) continue;
    if (e === newest) {
      earlier.push(...e.message.toolCalls.slice(0, e.message.toolCalls.findIndex((c) => c.id === call.id)));
      break;
    }
    earlier.push(...e.message.toolCalls);
  }
  const key = callKey(call);
  let inARow = 0;
  for (let i = earlier.length - 1; i >= 0 && callKey(earlier[i] as ToolCall) === key; i--) inARow++;
  if (inARow < limit) return undefined;
  return {
    code: 'error',
    content: `Not run: this is the same ${call.name} call with the same arguments ${inARow} times in a row, the most this session allows (--max-repeats ${limit}). Its result will not change; use what the earlier calls returned, or try something different.`,
  };
}
