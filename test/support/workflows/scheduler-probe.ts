/**
 * A workflow that drives the tool scheduler (workflows/scheduler.ts) with hooks a test
 * chooses, so the scheduler's drain-before-reject rule can be checked on a real worker
 * with real activities, for failures that the session's own hooks cannot produce (a
 * dispatch that throws synchronously, a result that cannot be recorded).
 */
import { proxyActivities } from '@temporalio/workflow';
import { runToolCalls, type ScheduledCall } from '../../../workflows/scheduler';
import type { ToolCall } from '../../../contracts/messages';
import type { ToolOutcome } from '../../../contracts/tools/tool-outcome';

export interface ProbeActivities {
  /** Resolves when the test releases the call: a barrier, not a sleep. */
  slowTool(callId: string): Promise<ToolOutcome>;
}

/**
 * Which hook breaks, and for which call: `dispatch` throws synchronously, `reject` is an
 * activity that failed, `recordResult` cannot record the call's result.
 */
export type ProbeBreak = { hook: 'dispatch' | 'reject' | 'recordResult'; callId: string };

const { slowTool } = proxyActivities<ProbeActivities>({ startToCloseTimeout: '1 minute' });

/** Runs read-only calls `slow` (an activity held by the test), then `fast` ones; returns the hooks' trace. */
export async function schedulerProbe(calls: { id: string; slow: boolean }[], broken: ProbeBreak, concurrency = 4): Promise<string[]> {
  const trace: string[] = [];
  const scheduled: ScheduledCall[] = calls.map(({ id }) => ({
    kind: 'dispatch',
    call: { id, name: 'calculator', input: {} } satisfies ToolCall,
    toolClass: 'read_only',
    needsApproval: false,
  }));
  const slow = new Set(calls.filter((c) => c.slow).map((c) => c.id));
  try {
    await runToolCalls(scheduled, {
      concurrency,
      recordCall: (call) => void trace.push(`call ${call.id}`),
      recordResult: (call) => {
        if (broken.hook === 'recordResult' && broken.callId === call.id) throw new Error(`cannot record ${call.id}`);
        trace.push(`result ${call.id}`);
      },
      dispatch: (call) => {
        if (broken.hook === 'dispatch' && broken.callId === call.id) throw new Error(`cannot dispatch ${call.id}`);
        if (broken.hook === 'reject' && broken.callId === call.id) return Promise.reject(new Error(`${call.id} failed`));
        return slow.has(call.id) ? slowTool(call.id) : Promise.resolve({ code: 'ok', content: call.id });
      },
      awaitApproval: () => Promise.resolve(undefined),
    });
    trace.push('resolved');
  } catch (error) {
    trace.push(`rejected: ${(error as Error).message}`);
  }
  return trace;
}
