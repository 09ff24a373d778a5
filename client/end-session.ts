import { stateQuery, type SessionResult } from '../contracts/api';
import { endSession, type SessionHandle } from './sessions';

/** A session asked to end: what it still runs first, and the wait for its end. */
export interface EndRequested {
  /** The turn running when the end was asked for, and the messages queued behind it: the session ends once they have run. */
  waitingFor?: { turn: number; queued: number };
  /** Resolves when the session has ended, with its result. */
  ended(): Promise<SessionEnd>;
}

export interface SessionEnd extends SessionResult {
  workflowId: string;
}

/**
 * Asks the session to end. The `end` Update is never refused while a turn runs: from
 * then on the session takes no more messages, but it ends only once no turn runs and none
 * is queued, so the running turn and the messages already accepted run to their end first
 * (`cancelTurn` stops a turn at once). A session already closed refuses it.
 */
export async function requestEnd(handle: SessionHandle): Promise<EndRequested> {
  // Asked first: an unknown id is refused before anything is sent, and a turn running now is one the end waits for.
  const state = await handle.query(stateQuery);
  await endSession(handle);
  return {
    ...(state.status === 'running' ? { waitingFor: { turn: state.turn, queued: state.queued } } : {}),
    // The result of the run that ends: a run the session continued into is followed.
    ended: async () => ({ workflowId: handle.workflowId, ...(await handle.result()) }),
  };
}
