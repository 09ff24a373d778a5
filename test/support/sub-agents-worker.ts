/**
 * A worker process that serves agents calling agents, for test/sub-agents-process.test.ts:
 * `createAgentWorker` with `agents`, as a program of one's own would build it, configured by
 * the variables `npm run worker` reads (tracing too), running the traced workflow bundle the
 * test made (AGENT_WORKFLOW_BUNDLE, test/support/traced-workflow-bundle.ts) instead of
 * webpacking its own. Its agents are test/support/sub-agent-definitions.ts's.
 */
import { NativeConnection } from '@temporalio/worker';
import { Agent } from 'undici';
import { tracingConfigFromEnv } from '../../tracing/tracing-config';
import { startTracing } from '../../tracing/tracing-provider';
import { parseWorkerEnv } from '../../worker/config';
import { readWorkerFiles } from '../../worker/config-files';
import { createAgentWorker } from '../../worker/create-worker';
import { prebuiltWorkflowBundle } from '../../worker/workflow-bundle-file';
import { SUB_AGENTS } from './sub-agent-definitions';

const env = parseWorkerEnv(process.env);
const files = readWorkerFiles(env, process.env);
const tracingConfig = tracingConfigFromEnv(process.env);
const tracing = tracingConfig && (await startTracing(tracingConfig, 'sub-agents-worker'));
const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '' });
const worker = await createAgentWorker({
  connection,
  namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
  env,
  dispatcher: new Agent(),
  ...files,
  ...(tracing ? { tracing } : {}),
  // Refused in one line if it lacks tracing's workflow interceptors, as `npm run worker` refuses it.
  workflowBundle: prebuiltWorkflowBundle(env.AGENT_WORKFLOW_BUNDLE, new Set(tracing ? ['tracing' as const] : [])),
  agents: SUB_AGENTS,
  // A cancelled child's LLM call hears of its cancellation at its next heartbeat: every 250 ms
  // here rather than every 2 s, so the tests that cancel one wait less for it to close.
  heartbeatIntervalMs: 250,
  overrides: {
    maxHeartbeatThrottleInterval: '250 ms',
    defaultHeartbeatThrottleInterval: '250 ms',
    // A SIGKILLed worker never gives back its sticky queue: the session's next workflow task
    // waits this long there before the other worker may take it (Temporal's default is 10 s).
    stickyQueueScheduleToStartTimeout: '1 second',
  },
});
console.log(`worker: polling task queue "${env.AGENT_TASK_QUEUE}" with agents ${SUB_AGENTS.map((a) => a.name).join(', ')}`);
await worker.run();
