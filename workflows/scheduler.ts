import { CancellationScope, CancelledFailure } from '@temporalio/workflow';
import type { ToolCall } from '../contracts/messages';
import type { ToolOutcome } from '../contracts/tools/tool-outcome';
import type { ToolClass } from '../contracts/tools/tool-definition';

/** A call as the scheduler sees it: already prepared, so dispatchable or answered without dispatch. */
export type ScheduledCall =
  | { kind: 'dispatch'; call: ToolCall; toolClass: ToolClass; needsApproval: boolean }
  | { kind: 'answer'; call: ToolCall; outcome: ToolOutcome };

export interface SchedulerHooks {
  /** Read-only calls that may run at once. */
  concurrency: number;
  /** Appends `tool/call`. Called just before dispatch, never for a call that is not dispatched. */
  recordCall(call: ToolCall): void;
  recordResult(call: ToolCall, outcome: ToolOutcome): void;
  /** Runs the call's activity. A rejection is an infrastructure failure and fails the step. */
  dispatch(call: ToolCall, toolClass: ToolClass): Promise<ToolOutcome>;
  /** Waits for a human decision; resolves with the result to record instead when the call may not run. */
  awaitApproval(call: ToolCall): Promise<ToolOutcome | undefined>;
  /** Whether the turn was cancelled. Default: the workflow's current cancellation scope says so. */
  isCancelled?(): boolean;
}

const scopeCancelled = () => CancellationScope.current().consideredCancelled;

/**
 * Runs the tool calls of one assistant message.
 *
 * Read-only calls run in parallel up to `concurrency`; a side-effecting call runs alone,
 * in call order, after everything before it has settled. At the first failure no new call
 * starts, every started call is drained, and only then does this reject: compensation in
 * the step driver therefore never races a dispatch that is still live.
 */
export async function runToolCalls(calls: readonly ScheduledCall[], hooks: SchedulerHooks): Promise<void> {
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  const fail = (error: unknown) => {
    failure ??= { error };
  };
  // Every entry settles without rejecting (failures go to `fail`), so a drain always waits
  // for every started call rather than leaving at the first rejection.
  const drain = () => Promise.all([...inFlight]);

  const start = (call: ToolCall, toolClass: ToolClass) => {
    hooks.recordCall(call);
    // A dispatch that throws synchronously, and a result that cannot be recorded, fail this
    // call like a rejected activity. The dispatch itself is not deferred: its command keeps
    // its place among the activation's other commands.
    const settled = dispatchNow(hooks, call, toolClass)
      .then((outcome) => hooks.recordResult(call, outcome))
      .catch(fail)
      .finally(() => inFlight.delete(settled));
    inFlight.add(settled);
  };

  /** A cancelled turn must not start anything new, even between two calls. */
  const stopped = () => {
    if (!failure && (hooks.isCancelled ?? scopeCancelled)()) fail(new CancelledFailure('the turn was cancelled'));
    return failure !== undefined;
  };

  const dispatchInOrder = async (): Promise<void> => {
    for (const scheduled of calls) {
      if (stopped()) break;
      if (scheduled.kind === 'answer') {
        hooks.recordResult(scheduled.call, scheduled.outcome);
        continue;
      }
      const { call, toolClass } = scheduled;
      if (toolClass === 'side_effecting') {
        await drain();
        if (scheduled.needsApproval && !stopped()) {
          const refusal = await hooks.awaitApproval(call).catch((error: unknown) => {
            fail(error);
            return undefined;
          });
          if (refusal) {
            hooks.recordResult(call, refusal);
            continue;
          }
        }
        if (stopped()) break;
        start(call, toolClass);
        await drain();
        continue;
      }
      while (inFlight.size >= hooks.concurrency) await Promise.race(inFlight);
      if (stopped()) break;
      start(call, toolClass);
    }
  };

  try {
    await dispatchInOrder();
  } catch (error) {
    // Whatever left the loop (a hook that threw, an approval that broke), the calls already
    // started are drained below before this rejects: drain-before-reject is not a matter
    // of every path remembering to do it.
    fail(error);
  }
  await drain();
  if (failure) throw failure.error;
}

function dispatchNow(hooks: SchedulerHooks, call: ToolCall, toolClass: ToolClass): Promise<ToolOutcome> {
  try {
    return hooks.dispatch(call, toolClass);
  } catch (error) {
    return Promise.reject(error);
  }
}
