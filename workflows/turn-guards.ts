import { CancellationScope, sleep } from '@temporalio/workflow';
import { WORKFLOW_ERROR_TYPES } from '../contracts/errors';
import { isCancellation } from './failure';
import type { ToolCall } from '../contracts/messages';
import type { FailureSummary, SessionEvent } from '../contracts/session-log';
import type { ToolOutcome } from '../contracts/tools/tool-outcome';

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
