import type { WorkflowHandle } from '@temporalio/client';
import type { RecordedRequest } from '../testing/scripted-llm/server';
import { median, round } from './stats';

type History = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;
type HistoryEvent = NonNullable<History['events']>[number];

/**
 * Where a step's time goes, from the server's event timestamps (and, for our loop, the
 * scripted LLM's request times, on the same clock). Medians over every step of the runs.
 * - dispatch: a task's scheduled → started (server to worker; eager activities start at once);
 * - run: started → completed (the worker's share, including its round trip to the server);
 * - for the LLM activity, its start splits at the request's arrival at the LLM: what comes
 *   before is the activity starting in Node plus its query for the conversation.
 */
export interface StepAnatomy {
  workflowTasksPerStep: number;
  eventsPerStep: number;
  workflowTaskDispatchMs: number;
  workflowTaskRunMs: number;
  llmActivityDispatchMs: number;
  llmActivityRunMs: number;
  /** Agent only: activity start → the request reaches the scripted LLM. */
  llmStartToRequestMs: number | null;
  /** Agent only: the scripted LLM's own time for the request (arrival → response sent). */
  llmRequestMs: number | null;
  /** The slowest of a step's three tool activities, start → completed. */
  toolActivitiesRunMs: number;
}

const ms = (e: HistoryEvent | undefined): number => (e ? Number(e.eventTime?.seconds ?? 0) * 1000 + Number(e.eventTime?.nanos ?? 0) / 1e6 : Number.NaN);

/** @param llmActivity the LLM activity's type name (`callLlm`, or the floor's `floorLlm`). */
export function stepAnatomy(histories: readonly History[], llmActivity: string, requests: readonly (readonly RecordedRequest[])[] = []): StepAnatomy {
  const acc = { wftDispatch: [] as number[], wftRun: [] as number[], llmDispatch: [] as number[], llmRun: [] as number[], toRequest: [] as number[], request: [] as number[], tools: [] as number[] };
  let steps = 0;
  let workflowTasks = 0;
  let events = 0;
  histories.forEach((history, runIndex) => {
    const list = history.events ?? [];
    const byId = new Map(list.map((e) => [Number(e.eventId), e]));
    events += list.length;
    for (const e of list) {
      const started = e.workflowTaskStartedEventAttributes;
      if (started) acc.wftDispatch.push(ms(e) - ms(byId.get(Number(started.scheduledEventId))));
      const completed = e.workflowTaskCompletedEventAttributes;
      if (completed) {
        acc.wftRun.push(ms(e) - ms(byId.get(Number(completed.startedEventId))));
        workflowTasks++;
      }
    }
    const activity = (scheduled: HistoryEvent) => {
      const id = Number(scheduled.eventId);
      const started = list.find((e) => Number(e.activityTaskStartedEventAttributes?.scheduledEventId) === id);
      const done = list.find((e) => Number(e.activityTaskCompletedEventAttributes?.scheduledEventId) === id);
      return { scheduled: ms(scheduled), started: ms(started), done: ms(done) };
    };
    const scheduled = list.filter((e) => e.activityTaskScheduledEventAttributes);
    const llm = scheduled.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === llmActivity).map(activity);
    const tools = scheduled.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name !== llmActivity).map(activity);
    steps += llm.length;
    llm.forEach((a, i) => {
      acc.llmDispatch.push(a.started - a.scheduled);
      acc.llmRun.push(a.done - a.started);
      const request = requests[runIndex]?.[i];
      if (request) {
        acc.toRequest.push(request.at - a.started);
        if (request.endedAt !== undefined) acc.request.push(request.endedAt - request.at);
      }
      const mine = tools.filter((t) => t.scheduled >= a.done && t.scheduled < (llm[i + 1]?.scheduled ?? Infinity));
      if (mine.length > 0) acc.tools.push(Math.max(...mine.map((t) => t.done - t.started)));
    });
  });
  const m = (values: number[]) => round(median(values.filter(Number.isFinite)), 1);
  const maybe = (values: number[]) => (values.length === 0 ? null : m(values));
  return {
    workflowTasksPerStep: round(workflowTasks / steps, 2),
    eventsPerStep: round(events / steps, 1),
    workflowTaskDispatchMs: m(acc.wftDispatch),
    workflowTaskRunMs: m(acc.wftRun),
    llmActivityDispatchMs: m(acc.llmDispatch),
    llmActivityRunMs: m(acc.llmRun),
    llmStartToRequestMs: maybe(acc.toRequest),
    llmRequestMs: maybe(acc.request),
    toolActivitiesRunMs: m(acc.tools),
  };
}
