/**
 * A worker process that serves agents (defineAgent), for the gateway's tests: `npm run
 * worker` serves none, and a gateway starts sessions by agent name. Configured by the
 * variables `npm run worker` reads (the live stream's too, AGENT_LIVE_STREAM: it publishes as
 * `npm run worker` does); the agents' scripted model is `AGENTS_WORKER_MODEL`.
 *
 * - `helper`: calculator and write_file, write_file waiting for approval, four steps a turn.
 * - `other`: the same model, no tools; a key limited to `helper` may not use it.
 */
import { NativeConnection } from '@temporalio/worker';
import { Agent } from 'undici';
import { liveStreamConfigOf } from '../../config/live-stream';
import { defineAgent } from '../../contracts/agents/agent-definition';
import { createLiveStreamPublisher } from '../../streaming';
import { workflowBundle } from '../../harness/local-agent';
import { parseWorkerEnv } from '../../worker/config';
import { readWorkerFiles } from '../../worker/config-files';
import { createAgentWorker } from '../../worker/create-worker';

const model = `anthropic:${process.env.AGENTS_WORKER_MODEL ?? 'agents-worker'}`;
const AGENTS = [
  defineAgent({
    name: 'helper',
    description: 'answers with a calculator and can write files',
    model,
    system: 'You help.',
    tools: ['calculator', 'write_file'],
    settings: { maxSteps: 4, approvalRequired: ['write_file'] },
  }),
  defineAgent({ name: 'other', model, tools: [] }),
];

const env = parseWorkerEnv(process.env);
const files = readWorkerFiles(env, process.env);
const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '' });
const namespace = process.env.TEMPORAL_NAMESPACE ?? 'default';
// The live stream as `npm run worker` makes it (AGENT_LIVE_STREAM, AGENT_LIVE_STREAM_SOCKET); with no gateway listening it drops what it publishes.
const liveStream = createLiveStreamPublisher(liveStreamConfigOf(env, { namespace, taskQueue: env.AGENT_TASK_QUEUE }), { log: (line) => console.log(`worker: ${line}`) });
const worker = await createAgentWorker({
  connection,
  namespace,
  env,
  dispatcher: new Agent(),
  liveStream,
  ...files,
  // The tests' bundle, cached on disk: bundling takes tens of seconds in each process otherwise.
  workflowBundle: await workflowBundle(),
  agents: AGENTS,
});
console.log(`worker: polling task queue "${env.AGENT_TASK_QUEUE}" with agents ${AGENTS.map((a) => a.name).join(', ')}`);
await worker.run();
