import type { TurnOutcome } from './api';

/** One message to a session that a workflow of one's own started as its child, and what came of it. */
export interface AskSessionRequest {
  workflowId: string;
  text: string;
  /**
   * The `send` Update's id, the same on every attempt: a retried activity attaches to the
   * turn its first attempt started instead of starting a second one.
   */
  updateId: string;
}

/** The turn's outcome, and the text of its last answer (empty when the turn gave none). */
export interface SessionAnswer {
  outcome: TurnOutcome;
  text: string;
}

/** The activities behind `durable-agent-worker/workflows`' child sessions, for `proxyActivities` in a workflow. */
export interface ChildSessionActivities {
  askSession(request: AskSessionRequest): Promise<SessionAnswer>;
  endSession(request: { workflowId: string }): Promise<void>;
}
