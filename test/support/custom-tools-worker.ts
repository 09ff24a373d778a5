/**
 * A worker process that serves custom tools, for the tests that kill one
 * (test/custom-tools-process.test.ts): `createAgentWorker` with `tools`, as a program of
 * one's own would build it, configured by the variables `npm run worker` reads. `charge`
 * notes each run (its process, call and key) in the file `CUSTOM_TOOLS_MARKS` names and then
 * never returns, so a test can kill the process that runs it in the middle of it.
 */
import { appendFileSync } from 'node:fs';
import { NativeConnection } from '@temporalio/worker';
import { Agent } from 'undici';
import { z } from 'zod';
import { defineTool } from '../../contracts/tools/custom-tool';
import { workflowBundle } from '../../harness/local-agent';
import { parseWorkerEnv } from '../../worker/config';
import { readWorkerFiles } from '../../worker/config-files';
import { createAgentWorker } from '../../worker/create-worker';

const marks = process.env.CUSTOM_TOOLS_MARKS ?? '';

const charge = defineTool({
  name: 'charge',
  description: 'Charges a card.',
  input: z.object({ cents: z.number().int() }),
  sideEffects: true,
  // A killed worker is noticed within this.
  heartbeatTimeoutMs: 2_000,
  run: (_input, { callId, idempotencyKey }) => {
    appendFileSync(marks, `${process.pid} ${callId} ${idempotencyKey}\n`);
    return new Promise<never>(() => undefined);
  },
});

const lookup = defineTool({ name: 'lookup', description: 'Looks something up.', input: z.object({ q: z.string() }), sideEffects: false, run: ({ q }) => `found ${q}` });

const env = parseWorkerEnv(process.env);
const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '' });
const worker = await createAgentWorker({
  connection,
  namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
  env,
  dispatcher: new Agent(),
  ...readWorkerFiles(env, process.env),
  // The tests' bundle, cached on disk: bundling takes tens of seconds in each process otherwise.
  workflowBundle: await workflowBundle(),
  tools: [charge, lookup],
});
console.log(`worker: polling task queue "${env.AGENT_TASK_QUEUE}" with custom tools`);
await worker.run();
