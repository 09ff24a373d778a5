import { allHandlersFinished, condition } from '@temporalio/workflow';
import type { SessionInput, SessionResult } from '../contracts/api';
import { jsonBytes } from '../contracts/log-pages';
import { CARRY_COMPACT_BYTES } from './context-compactor';
import type { Session } from './session-run';
import { atFirstRevision } from '../contracts/session-revision';

/**
 * What the session does next, decided in `nextMove` and acted on by the session's loop.
 * Of its moves only `end` ends a session, asked for by a person or by the idle clock; no
 * limit does: `maxSteps` ends a turn, and a spent budget fails the turn and keeps the
 * session open to be raised. (A session can still fail: see continue-as-new.ts.)
 */
export type NextMove =
  | { kind: 'run-turn' }
  /** The next run's input is large and a turn can be cut: compact it first, then decide again. */
  | { kind: 'compact-before-continuing' }
  | { kind: 'continue-as-new'; next: SessionInput }
  | { kind: 'end'; endedBy: SessionResult['endedBy'] };

/**
 * Waits for the session's next move and says what it is; the loop acts on it, so this
 * changes nothing. It continues as new only between turns, and only once every Update
 * handler has finished: an Update accepted by this run must be answered by this run, and a
 * message arriving meanwhile is run here first. Otherwise it waits for a message or an end
 * for at most `idleTimeoutMs` (from revision 2 on the session's one idle clock, ./idle-clock.ts).
 */
export async function nextMove(session: Pick<Session, 'state' | 'config' | 'compactor' | 'historyIsLong' | 'replayIsLong' | 'nextRunInput' | 'idleClock'>): Promise<NextMove> {
  const { state } = session;
  const long = session.historyIsLong();
  if (!state.hasWork() && (long || session.replayIsLong())) {
    await condition(() => allHandlersFinished() || state.hasWork());
    if (!state.hasWork()) {
      const next = session.nextRunInput();
      const bytes = jsonBytes(next);
      if (long) return session.compactor.dueBeforeContinuing(bytes) ? { kind: 'compact-before-continuing' } : { kind: 'continue-as-new', next };
      // Only the replay bound asks: a shorter replay is worth no LLM call, so a next input
      // that would be compacted stays in this run.
      if (bytes <= CARRY_COMPACT_BYTES) return { kind: 'continue-as-new', next };
    }
  }
  const woke =
    atFirstRevision(session.config)
      ? await condition(() => state.hasWork(), session.config.idleTimeoutMs, { summary: 'idle timeout' })
      : await session.idleClock.wait(() => state.hasWork(), session.config.idleTimeoutMs);
  if (state.queued > 0) return { kind: 'run-turn' };
  // A session that handed its conversation over ends at once (./handoff.ts).
  return { kind: 'end', endedBy: state.handedOffTo ? 'handoff' : woke ? 'request' : 'idle_timeout' };
}
