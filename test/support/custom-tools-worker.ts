/**
 * A worker process that serves custom tools, for test/custom-tools-process.test.ts:
 * `createAgentWorker` with `tools`, as a program of one's own would build it, configured by
 * the variables `npm run worker` reads (tracing too). It polls two task queues: the one every
 * process of the test shares (`AGENT_TASK_QUEUE`), where any of them may take a call, and its
 * own (`CUSTOM_TOOLS_OWN_QUEUE`), for what must run on this process. Every tool reports each
 * run to the test's call gate (`CUSTOM_TOOLS_GATE`, test/support/tool-call-gate.ts), which
 * holds it as long as the test needs to see which calls run at once.
 */
import { NativeConnection } from '@temporalio/worker';
import { Agent } from 'undici';
import { z } from 'zod';
import { defineTool, type ToolContext } from '../../contracts/tools/custom-tool';
import { workflowBundle } from '../../harness/local-agent';
import { tracingConfigFromEnv } from '../../tracing/tracing-config';
import { startTracing } from '../../tracing/tracing-provider';
import { parseWorkerEnv } from '../../worker/config';
import { readWorkerFiles } from '../../worker/config-files';
import { createAgentWorker } from '../../worker/create-worker';

const gate = process.env.CUSTOM_TOOLS_GATE ?? '';

/** Tells the gate this run started, and returns once the gate lets it go on. */
async function report(tool: string, input: unknown, { callId, idempotencyKey }: Pick<ToolContext, 'callId' | 'idempotencyKey'>, event = 'run'): Promise<void> {
  const response = await fetch(`${gate}/${event}`, { method: 'POST', body: JSON.stringify({ pid: process.pid, tool, callId, idempotencyKey, input }) });
  if (!response.ok) throw new Error(`the gate answered ${response.status}`);
}

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks something up.',
  input: z.object({ q: z.string() }),
  sideEffects: false,
  async run(input, ctx) {
    await report('lookup', input, ctx);
    return `found ${input.q}`;
  },
});

const refund = defineTool({
  name: 'refund',
  description: 'Refunds an order.',
  input: z.object({ order: z.string() }),
  sideEffects: true,
  async run(input, ctx) {
    await report('refund', input, ctx);
    return `refunded ${input.order}`;
  },
});

const orderApi = defineTool({
  name: 'order_api',
  description: 'Calls the order API: GET reads, POST changes.',
  input: z.object({ method: z.enum(['GET', 'POST']) }),
  sideEffects: ({ method }) => method !== 'GET',
  async run(input, ctx) {
    await report('order_api', input, ctx);
    return `${input.method} done`;
  },
});

const charge = defineTool({
  name: 'charge',
  description: 'Charges a card.',
  input: z.object({ cents: z.number().int() }),
  sideEffects: true,
  // A killed worker is noticed within this.
  heartbeatTimeoutMs: 2_000,
  async run(input, ctx) {
    await report('charge', input, ctx);
    // Never returns: the test kills the process in the middle of it.
    return new Promise<never>(() => undefined);
  },
});

const waitForCancel = defineTool({
  name: 'wait_for_cancel',
  description: 'Runs until cancelled.',
  input: z.object({}),
  sideEffects: false,
  async run(input, ctx) {
    await report('wait_for_cancel', input, ctx);
    await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
    await report('wait_for_cancel', input, ctx, 'aborted');
    throw new Error('aborted');
  },
});

const env = parseWorkerEnv(process.env);
const files = readWorkerFiles(env, process.env);
const tracingConfig = tracingConfigFromEnv(process.env);
const tracing = tracingConfig && (await startTracing(tracingConfig, 'custom-tools-worker'));
const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '' });
// The tests' bundle, cached on disk: bundling takes tens of seconds in each process otherwise.
const bundle = await workflowBundle();
const queues = [env.AGENT_TASK_QUEUE, process.env.CUSTOM_TOOLS_OWN_QUEUE ?? ''];
const workers = await Promise.all(
  queues.map((queue) =>
    createAgentWorker({
      connection,
      namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
      env: { ...env, AGENT_TASK_QUEUE: queue },
      dispatcher: new Agent(),
      ...files,
      ...(tracing ? { tracing } : {}),
      workflowBundle: bundle,
      tools: [lookup, refund, orderApi, charge, waitForCancel],
    }),
  ),
);
console.log(`worker: polling task queues ${queues.map((q) => `"${q}"`).join(' and ')} with custom tools`);
await Promise.all(workers.map((worker) => worker.run()));
