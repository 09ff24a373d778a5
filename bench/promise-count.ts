import v8 from 'node:v8';
import type { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import type { Bundle } from './bundles';

type Named = { workflowId: string; history: ReturnType<typeof historyFromJSON> };

/**
 * The promises a bundle's workflow creates per replay of `histories`, on average. The SDK's
 * promise hook records a stack trace for every one of them (about a fifth of the workflow
 * thread's CPU in the profiles in bench/README.md), and unlike CPU time the count does
 * not move with the load on the machine: on a shared machine it is the figure that shows
 * whether a change made a step do more. A replay worker runs its workflows in this thread
 * (the SDK's debug mode, its default for replays), where a hook of ours sees them; a
 * promise of the workflow's own context is one whose constructor is not this thread's
 * `Promise`.
 */
export async function promisesPerReplay(bundle: Bundle, histories: readonly Named[]): Promise<number> {
  let created = 0;
  const stop = v8.promiseHooks.onInit((promise: Promise<unknown>) => {
    if (promise.constructor !== Promise) created++;
  });
  try {
    for await (const result of Worker.runReplayHistories({ workflowBundle: { code: bundle.code } }, histories)) {
      if (result.error) throw new Error(`bench: replaying ${result.workflowId} failed: ${result.error.message}`);
    }
  } finally {
    stop();
  }
  return created / histories.length;
}
