import { fileURLToPath } from 'node:url';

/** The recorded histories the replay test replays, written by `npm run record-history`. */
export const HISTORIES = {
  /** The shop's own workflow, answering the refund ticket. */
  ticket: fileURLToPath(new URL('../../../history/answer-ticket.json', import.meta.url)),
  /** The support session it started as its child. */
  session: fileURLToPath(new URL('../../../history/support-session.json', import.meta.url)),
};

interface HistoryEvents {
  events?: { startChildWorkflowExecutionInitiatedEventAttributes?: { workflowId?: string | null } | null }[] | null;
}

/** The session a ticket's workflow started as its child, from its history as fetched or as recorded. */
export function childSessionId(ticketHistory: HistoryEvents): string {
  const started = ticketHistory.events?.find((event) => event.startChildWorkflowExecutionInitiatedEventAttributes);
  const workflowId = started?.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId;
  if (!workflowId) throw new Error('the ticket history starts no session');
  return workflowId;
}
