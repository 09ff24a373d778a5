import type { WorkflowClient } from '@temporalio/client';
// The SDK's writer of the history JSON that the CLI, the UI and `historyFromJSON` read; 1.24 exports it only here.
import { historyToJSON } from '@temporalio/common/lib/proto-utils';

/**
 * The Temporal event histories of a session's runs. A session continues as new when its
 * history grows long, so its events are spread over a chain of runs; each run's first
 * history event names the run it continued from. Reading histories needs no worker.
 */
export interface RunHistory {
  runId: string;
  /** The run this one continued from, as its first history event names it. */
  continuedFromRunId?: string;
  /** The history as the JSON that `Worker.runReplayHistory` loads (and the UI's "download" produces). */
  json: string;
  /** How many history events it has. */
  events: number;
}

/** One run's history: the latest run's when `runId` is absent. */
export async function runHistory(workflows: Pick<WorkflowClient, 'getHandle'>, workflowId: string, runId?: string): Promise<RunHistory> {
  const handle = workflows.getHandle(workflowId, runId);
  const id = runId ?? (await handle.describe()).runId;
  const history = await workflows.getHandle(workflowId, id).fetchHistory();
  const events = history.events ?? [];
  const continuedFrom = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
  return { runId: id, ...(continuedFrom ? { continuedFromRunId: continuedFrom } : {}), json: historyToJSON(history), events: events.length };
}

/** Every run's history, the first run first, found by following each run back to the one it continued from. */
export async function allRunHistories(workflows: Pick<WorkflowClient, 'getHandle'>, workflowId: string): Promise<RunHistory[]> {
  const runs = [await runHistory(workflows, workflowId)];
  const seen = new Set(runs.map((r) => r.runId));
  for (let from = runs[0]?.continuedFromRunId; from !== undefined && !seen.has(from); from = runs[0]?.continuedFromRunId) {
    seen.add(from);
    runs.unshift(await runHistory(workflows, workflowId, from));
  }
  return runs;
}
