import { allHandlersFinished, condition } from '@temporalio/workflow';
import type { SessionResult } from '../contracts/api';
import type { QueuedMessage, SessionState } from './session-state';

/**
 * What the session does next, decided in `nextMove` and acted on by the session's loop.
 * Of its moves only `end` ends a session, asked for by a person or by the idle clock; no
 * limit does: `maxSteps` ends a turn, and a spent budget fails the turn and keeps the
 * session open to be raised. (A session can still fail: see continue-as-new.ts.)
 */
export type NextMove =
  | { kind: 'run-turn'; message: QueuedMessage }
  | { kind: 'continue-as-new' }
  | { kind: 'end'; endedBy: SessionResult['endedBy'] };

/**
 * Waits for the session's next move. It continues as new only between turns, and only once
 * every Update handler has finished: an Update accepted by this run must be answered by this
 * run, and a message arriving meanwhile is run here first. Otherwise it waits for a message
 * or an end for at most `idleTimeoutMs`.
 */
export async function nextMove(state: SessionState, idleTimeoutMs: number, historyIsLong: () => boolean): Promise<NextMove> {
  if (!state.hasWork() && historyIsLong()) {
    await condition(() => allHandlersFinished() || state.hasWork());
    if (!state.hasWork()) return { kind: 'continue-as-new' };
  }
  const woke = await condition(() => state.hasWork(), idleTimeoutMs, { summary: 'idle timeout' });
  const message = state.queue.shift();
  if (message) return { kind: 'run-turn', message };
  return { kind: 'end', endedBy: woke ? 'request' : 'idle_timeout' };
}
