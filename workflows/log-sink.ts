import { proxySinks, workflowInfo, type Sinks } from '@temporalio/workflow';
import type { LlmSettings } from '../contracts/llm-call';
import type { SessionEvent } from '../contracts/session-log';

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
export interface SessionLogSinks extends Sinks {
  sessionLog: {
    /** A run starts: its settings and the events it starts with (carried, forked, repaired). */
    opened(settings: LlmSettings, events: readonly SessionEvent[]): void;
    /** Events appended since the last call, in order. */
    appended(events: readonly SessionEvent[]): void;
    /** The run has ended or continued as new: nothing will read its copy again. */
    closed(): void;
  };
}

const { sessionLog } = proxySinks<SessionLogSinks>();

/** The sink, silent during replay. */
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
