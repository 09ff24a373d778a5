/**
 * The scheduler drains every started call before it rejects, whatever broke: a dispatch
 * that throws synchronously, or a result that cannot be recorded. Compensation runs after the
 * rejection, so a call still in flight then would race it. Real worker, real activities,
 * on the shared dev server through TestWorkflowEnvironment.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolOutcome } from '../contracts/tools/tool-outcome';
import { barrier, type Barrier } from './support/barrier';
import type { ProbeBreak, schedulerProbe } from './support/workflows/scheduler-probe';
import { createDevServerEnv, uniqueTaskQueue } from './temporal-env';

const PROBE_PATH = new URL('./support/workflows/scheduler-probe.ts', import.meta.url).pathname;

let env: TestWorkflowEnvironment;
let worker: Worker;
let running: Promise<void>;
const taskQueue = uniqueTaskQueue('scheduler-drain');
/** Each held call: `started` resolves when its activity runs, `release` lets it finish. */
const held = new Map<string, { started: Barrier; release: Barrier<ToolOutcome> }>();
const holdOf = (callId: string) => {
  let hold = held.get(callId);
  if (!hold) held.set(callId, (hold = { started: barrier(), release: barrier<ToolOutcome>() }));
  return hold;
};

beforeAll(async () => {
  env = await createDevServerEnv();
  const workflowBundle = await bundleWorkflowCode({ workflowsPath: PROBE_PATH, logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} } });
  worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    workflowBundle,
    activities: {
      slowTool: async (callId: string) => {
        const hold = holdOf(callId);
        hold.started.open();
        return hold.release.wait();
      },
    },
  });
  running = worker.run();
});
afterAll(async () => {
  worker?.shutdown();
  await running;
  await env?.teardown();
});

function start(name: string, calls: { id: string; slow: boolean }[], broken: ProbeBreak, concurrency?: number) {
  return env.client.workflow.start<typeof schedulerProbe>('schedulerProbe', { taskQueue, workflowId: `${name}-${taskQueue}`, args: [calls, broken, concurrency] });
}

async function probe(name: string, calls: { id: string; slow: boolean }[], broken: ProbeBreak, slowId: string): Promise<string[]> {
  const handle = await start(name, calls, broken);
  // A scheduler that does not drain may finish the workflow before the held call even
  // starts, so either is the signal to go on.
  await Promise.race([holdOf(slowId).started.wait(), handle.result()]);
  holdOf(slowId).release.open({ code: 'ok', content: 'done' });
  return handle.result();
}

describe('the tool scheduler drains the calls it started before it rejects', () => {
  it('when a dispatch throws synchronously: the running call is recorded first, then the dispatch error', async () => {
    const trace = await probe('sync-dispatch', [{ id: 'a', slow: true }, { id: 'b', slow: false }], { hook: 'dispatch', callId: 'b' }, 'a');
    expect(trace).toEqual(['call a', 'call b', 'result a', 'rejected: cannot dispatch b']);
  });

  it('when a result cannot be recorded: the other running call is recorded first, then the recording error', async () => {
    const trace = await probe('record-result', [{ id: 'c', slow: false }, { id: 'd', slow: true }], { hook: 'recordResult', callId: 'c' }, 'd');
    expect(trace).toEqual(['call c', 'call d', 'result d', 'rejected: cannot record c']);
  });

  it('starts nothing after a call failed, even with the next call already waiting for a free slot', async () => {
    const handle = await start('no-dispatch-after-failure', [{ id: 'e', slow: false }, { id: 'f', slow: false }], { hook: 'reject', callId: 'e' }, 1);
    expect(await handle.result()).toEqual(['call e', 'rejected: e failed']);
  });
});
