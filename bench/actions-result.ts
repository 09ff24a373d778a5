import type { temporal } from '@temporalio/proto';
import type { ActionCounts } from './stream-actions';

/**
 * `--only actions`: what a session costs in billable actions (bench/actions.ts). The scales,
 * the result's shape, and the rules by which actions are counted from a history.
 */
export interface ActionsSettings {
  /** Sessions measured one after another; the report gives the median one. */
  runs: number;
  /** Steps of the measured turn: all but the last ask for three calculator calls. */
  steps: number;
  /** How long an idle session is watched for actions; the report scales it to an hour. */
  idleSeconds: number;
  /** How long one LLM call streams its answer while its heartbeats are counted; scaled to a minute. */
  streamSeconds: number;
}

export const ACTIONS_SCALES = {
  full: { runs: 3, steps: 10, idleSeconds: 120, streamSeconds: 60 },
  quick: { runs: 2, steps: 10, idleSeconds: 20, streamSeconds: 15 },
  smoke: { runs: 1, steps: 3, idleSeconds: 2, streamSeconds: 3 },
} as const satisfies Record<string, ActionsSettings>;

/** One session of one turn, counted two ways. */
export interface SessionActions {
  /** The dev server's `action` counter from before the start to after the turn, by `action_type`. */
  metered: ActionCounts;
  meteredTotal: number;
  /** Counted from the session's history by Temporal Cloud's documented rules (heartbeats and Queries are billed too, but are not in history). */
  fromHistory: HistoryActions;
  historyTotal: number;
  llmCalls: number;
  toolCalls: number;
  /** One start, one activity per LLM call and per tool call, one Update for the message. */
  minimum: number;
  /** The same turn sent again to the session, metered apart, beside its minimum (its activities, its Update). */
  laterTurn: { metered: ActionCounts; meteredTotal: number; minimum: number };
  /** What `end` adds (its Update), counted apart: a session ends once, not per turn. */
  endMetered: ActionCounts;
}

export interface ActionsResult {
  settings: ActionsSettings;
  /** The median run by metered total, and every run's metered total. */
  session: SessionActions;
  meteredTotals: number[];
  idle: { seconds: number; metered: ActionCounts; perHour: number };
  /**
   * One turn whose one LLM call streams for `seconds`: its actions, its heartbeats scaled to a
   * minute of streaming, and apart the Queries of a `watch` that followed it (a round every 500 ms).
   */
  streaming: { seconds: number; metered: ActionCounts; heartbeatsPerMinute: number; watch: { seconds: number; queries: number } };
  /** What each client call costs once, by `action_type`: the state and log Queries, the list of sessions. */
  client: Record<'state' | 'log' | 'list', ActionCounts>;
  durationS: number;
}

/** History events Temporal Cloud bills one action for, by the name the report gives them. */
export type HistoryActions = Record<string, number>;

/**
 * The billable events of a history (Temporal Cloud's "Actions" page): a workflow's start
 * (and a continue-as-new's), each activity scheduled and each retry of it, each local
 * activity (its marker), timers, search-attribute and memo upserts, accepted Updates,
 * signals in and out, and child workflows started.
 */
export function historyActions(events: readonly temporal.api.history.v1.IHistoryEvent[]): HistoryActions {
  const counts: HistoryActions = {};
  const add = (kind: string, n = 1) => {
    if (n > 0) counts[kind] = (counts[kind] ?? 0) + n;
  };
  for (const e of events) {
    if (e.workflowExecutionStartedEventAttributes) add('start');
    else if (e.workflowExecutionContinuedAsNewEventAttributes) add('continue-as-new');
    else if (e.activityTaskScheduledEventAttributes) add('activity');
    else if (e.activityTaskStartedEventAttributes) add('activity retry', (e.activityTaskStartedEventAttributes.attempt ?? 1) - 1);
    else if (e.markerRecordedEventAttributes?.markerName === 'core_local_activity') add('local activity');
    else if (e.timerStartedEventAttributes) add('timer');
    else if (e.upsertWorkflowSearchAttributesEventAttributes) add('search-attribute upsert');
    else if (e.workflowPropertiesModifiedEventAttributes) add('memo upsert');
    else if (e.workflowExecutionUpdateAcceptedEventAttributes) add('update');
    else if (e.workflowExecutionSignaledEventAttributes) add('signal');
    else if (e.signalExternalWorkflowExecutionInitiatedEventAttributes) add('signal out');
    else if (e.startChildWorkflowExecutionInitiatedEventAttributes) add('child workflow');
  }
  return counts;
}

export const sumCounts = (counts: Record<string, number>) => Object.values(counts).reduce((sum, n) => sum + n, 0);
