import { proxySinks, workflowInfo } from '@temporalio/workflow';
import type { SessionStatusSinks, SessionStatusUpdate } from '../contracts/session-status-sinks';

const { sessionStatus } = proxySinks<SessionStatusSinks>();

/**
 * What the session tells the people following it live (contracts/session-status-sinks.ts).
 * A sink call leaves no trace in history, so no patch guards it; it is silent while
 * replaying, as what a replay would say was said when the history was made.
 */
export function statusChanged(update: SessionStatusUpdate): void {
  if (!workflowInfo().unsafe.isReplaying) sessionStatus.changed(update);
}
