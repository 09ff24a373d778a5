import v8 from 'node:v8';
import type { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import type { Bundle } from './bundles';

type Named = { workflowId: string; history: ReturnType<typeof historyFromJSON> };

/** One history's replay under a bundle: the promises its workflow created, or why it did not replay. */
export type CountedReplay = { promises: number; error?: undefined } | { promises?: undefined; error: string };

/**
 * Replays each of `histories` under the bundle, counting the promises its workflow creates.
 * The SDK's promise hook records a stack trace for every one of them (about a fifth of the
 * workflow thread's CPU in the profiles in bench/README.md), and unlike CPU time the count
 * does not move with the load on the machine: on a shared machine it is the figure that
 * shows whether a change made a step do more. A replay worker runs its workflows in this
 * thread (the SDK's debug mode, its default for replays), where a hook of ours sees them; a
 * promise of the workflow's own context is one whose constructor is not this thread's
 * `Promise`. One replay worker runs them all, one after the other, so what was created
 * since the last result is the next history's; a history it does not replay (another
 * program's, or one the code no longer replays) gives its error instead, as
 * `Worker.runReplayHistory` would throw it. A replay worker takes most of a second to start:
 * one per history would cost more than the replays.
 */
export async function countedReplays(bundle: Bundle, histories: readonly Named[]): Promise<Map<string, CountedReplay>> {
  let created = 0;
  const stop = v8.promiseHooks.onInit((promise: Promise<unknown>) => {
    if (promise.constructor !== Promise) created++;
  });
  const counted = new Map<string, CountedReplay>();
  try {
    for await (const result of Worker.runReplayHistories({ workflowBundle: { code: bundle.code } }, histories)) {
      counted.set(result.workflowId, result.error ? { error: `${result.error.name}: ${result.error.message}` } : { promises: created });
      created = 0;
    }
  } finally {
    stop();
  }
  return counted;
}
