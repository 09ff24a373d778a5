import { proxySinks, workflowInfo } from '@temporalio/workflow';
import type { SessionLogSinks } from '../contracts/session-log-sinks';

/**
 * The session's log, mirrored into its worker's memory so that the LLM activity, which
 * usually runs on the same worker, reads the conversation there instead of querying the
 * session at every step (a round trip through the server and a query task per step).
 *
 * Sink calls leave no trace in history and are delivered before the workflow task that
 * made them completes, so before the activity it scheduled can start. The mirror is only
 * a cache: the activity checks it against the digest it was scheduled with and falls back
 * to a Query (activities/llm/session-log-cache.ts). So it is not fed while replaying: a
 * replay worker has nothing to feed, and a cache that missed events heals on the next call.
 */
const { sessionLog } = proxySinks<SessionLogSinks>();

/** The sink (contracts/session-log-sinks.ts), silent during replay. */
export const logMirror: SessionLogSinks['sessionLog'] = {
  opened(settings, events) {
    if (live()) sessionLog.opened(settings, events);
  },
  appended(events) {
    if (live() && events.length > 0) sessionLog.appended(events);
  },
  closed() {
    if (live()) sessionLog.closed();
  },
};

function live(): boolean {
  return !workflowInfo().unsafe.isReplaying;
}
