/**
 * The event stream over a real NATS broker (AGENT_LIVE_STREAM=nats://…): a real dev server,
 * a real worker process and the gateway's feeds, the broker stopped mid-turn and started
 * again. Losing the broker loses deltas only: the log reaches the viewer all the same.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSessionLog, sendMessage, startSession } from '../client';
import type { SessionEvent } from '../contracts/session-log';
import { startNatsServer, type NatsServer } from '../harness/nats-server';
import { agentWorkerEnv } from '../harness/worker-env';
import type { WorkerProcess } from '../harness/worker-process';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { openEventStream } from './support/event-stream';
import { eventually } from './support/eventually';
import { startEventsGateway, type EventsGateway } from './support/events-gateway';
import { devServerAddress, devServerNamespace } from './temporal-env';
import { startWorkerProcess } from './support/worker-processes';

const taskQueue = `gateway-events-broker-${randomUUID()}`;

let llm: ScriptedLlm;
let nats: NatsServer;
let connection: Connection;
let client: Client;
let gateway: EventsGateway;
let worker: WorkerProcess;

beforeAll(async () => {
  [llm, nats, connection] = await Promise.all([startScriptedLlm(), startNatsServer(), Connection.connect({ address: devServerAddress() })]);
  client = new Client({ connection, namespace: devServerNamespace() });
  gateway = await startEventsGateway({ client, liveStream: nats.url, taskQueue });
  worker = await startWorkerProcess('gateway-events-broker', agentWorkerEnv({ address: devServerAddress(), namespace: devServerNamespace(), taskQueue, llmUrl: llm.url, extra: gateway.workerEnv }));
}, 120_000);

afterAll(async () => {
  await worker?.kill('SIGKILL');
  await gateway?.close();
  await nats?.close();
  await connection?.close();
  await llm?.close();
});

const seqsOf = (events: readonly SessionEvent[]) => events.map((e) => e.seq);

describe('the event stream with the live stream on a broker', () => {
  it('gets every log event to a viewer, once, while the broker is down and after it restarts; only deltas are lost', async () => {
    const model = `broker-${randomUUID().slice(0, 8)}`;
    llm.script(
      model,
      { kind: 'tool_calls', calls: [{ id: 'toolu_broker_1', name: 'calculator', input: { expression: '6*7' } }] },
      { kind: 'text', text: 'It is 42, said while the broker was away.', chunkSize: 4, chunkDelayMs: 20, hold: true },
      { kind: 'text', text: 'And this, streamed through the broker again.', chunkSize: 4, chunkDelayMs: 20 },
    );
    const session = await startSession(client, { AGENT_TASK_QUEUE: taskQueue }, { model: `anthropic:${model}`, idleTimeoutMs: 120_000 });
    const viewer = await openEventStream(gateway.url, session.workflowId);
    try {
      const first = await sendMessage(session, 'what is 6*7?');
      await viewer.waitForLog((e) => e.type === 'tool/result');

      await nats.stop();
      await eventually('the subscriber to lose the broker', () => (gateway.subscriber?.connected === false ? true : undefined));
      await eventually('the held answer to be released', () => (llm.release(model) > 0 ? true : undefined));
      await first.outcome;
      // The rest of the turn comes from the log, read from Temporal while the broker is down.
      await viewer.waitForLog((e) => e.type === 'turn/end' && e.turn === 1);

      await nats.start();
      await eventually('the subscriber to reach the broker again', () => (gateway.subscriber?.connected === true ? true : undefined));
      const deltasBefore = viewer.messages().filter((m) => m.event === 'delta').length;
      await (await sendMessage(session, 'and again?')).outcome;
      await viewer.waitForLog((e) => e.type === 'turn/end' && e.turn === 2);
      // The broker carries the second answer's text live again.
      expect(viewer.messages().filter((m) => m.event === 'delta').length).toBeGreaterThan(deltasBefore);
    } finally {
      viewer.close();
    }
    const log = await readSessionLog(client.workflow, session.workflowId);
    expect(seqsOf(viewer.logEvents())).toEqual(seqsOf(log));
    await session.terminate('test cleanup');
  });
});
