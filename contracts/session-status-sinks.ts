import type { Sinks } from '@temporalio/workflow';
import type { TurnOutcome } from './api';
import type { Budget } from './budget';
import type { Spend } from './spend';

/** Where a session is, for the people following it live, in what its log does not say. */
export type SessionStatusUpdate =
  | { kind: 'approval_waiting'; turn: number; step: number; callId: string; toolName: string }
  | { kind: 'approval_decided'; turn: number; step: number; callId: string; toolName: string; outcome: 'approved' | 'denied' | 'timed_out' }
  /** After each LLM call: its spend added. */
  | { kind: 'budget'; turn: number; step: number; spend: Spend; budget: Budget }
  /** A turn ended; the session waits for the next message. */
  | { kind: 'turn_idle'; turn: number; step: number; status: TurnOutcome['status']; spend: Spend; budget: Budget };

/**
 * The sink through which a session tells its worker what the live stream shows besides the
 * log (approvals, spend against the budget, a turn gone idle): the workflow calls it
 * (workflows/status-sink.ts), the worker publishes a progress frame for each call
 * (worker/live-stream-sinks.ts). Like the log sink it leaves no trace in history.
 */
export interface SessionStatusSinks extends Sinks {
  sessionStatus: {
    changed(update: SessionStatusUpdate): void;
  };
}
