import type { WorkflowHandle } from '@temporalio/client';

/** The summaries of the timers a workflow started, in order: how the UI names its waits. */
export async function timerSummaries(handle: WorkflowHandle): Promise<string[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).flatMap((e) => {
    const data = e.userMetadata?.summary?.data;
    return e.timerStartedEventAttributes && data ? [JSON.parse(Buffer.from(data).toString('utf8')) as string] : [];
  });
}
