import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { ToolContext } from 'durable-agent-worker';
import { endSession, readLog, sendAndWait, startSession } from 'durable-agent-worker/client';
import { startFakeModel, toolCall, type FakeModel } from 'durable-agent-worker/testing';
import { startPaymentsApi } from '../src/payments-api.js';
import { createSupportWorker } from '../src/support-worker.js';
import { refund } from '../src/tools.js';
import { fakeProviders } from './support/fake-providers.js';
import { answerRefundTicket, REFUND_ANSWER } from './support/refund-ticket.js';
import { startTestServer } from './support/test-server.js';

let env: TestWorkflowEnvironment;
let model: FakeModel;
let folder: string;

before(async () => {
  [env, model, folder] = await Promise.all([startTestServer(), startFakeModel(), mkdtemp(path.join(tmpdir(), 'support-agent-'))]);
});

after(async () => {
  await model?.close();
  await env?.teardown();
});

test('a refund run again with the same idempotency key pays out once', async () => {
  const payments = await startPaymentsApi({ ledger: path.join(folder, 'again.jsonl') });
  process.env.PAYMENTS_URL = payments.url;
  // What the worker gives each call; a second run of one call is given the same key.
  const context = (idempotencyKey: string): ToolContext => ({ idempotencyKey, signal: new AbortController().signal, heartbeat() {}, sessionId: 'session-1', turn: 1, step: 1, callId: idempotencyKey });
  try {
    const first = await refund.run({ orderId: 'A-1002' }, context('call-1'));
    assert.deepEqual(await refund.run({ orderId: 'A-1002' }, context('call-1')), first);
    await refund.run({ orderId: 'A-1002' }, context('call-2'));
    assert.deepEqual((await payments.refunds()).map((made) => made.idempotencyKey), ['call-1', 'call-2']);
  } finally {
    await payments.close();
  }
});

test('answers a ticket on the shop’s own workflow and worker: looks the order up, refunds it once, and says so', { timeout: 120_000 }, async () => {
  const payments = await startPaymentsApi({ ledger: path.join(folder, 'happy.jsonl') });
  process.env.PAYMENTS_URL = payments.url;
  try {
    assert.equal(await answerRefundTicket(env, model, 'support-happy'), REFUND_ANSWER);
    const [made, ...more] = await payments.refunds();
    assert.deepEqual(more, []);
    assert.equal(made?.orderId, 'A-1001');
    assert.equal(made?.amountCents, 3_450);
    // What the lookup found went back to the model, which answered from it.
    assert.match(JSON.stringify(model.requests()[1]?.body), /two books/);
    assert.equal(model.pending(), 0);
  } finally {
    await payments.close();
  }
});

test('a refund whose worker process is SIGKILLed mid-call is answered TOOL_OUTCOME_UNKNOWN and never made twice', { timeout: 120_000 }, async () => {
  const taskQueue = 'support-killed';
  let requests = 0;
  let refundReceived!: () => void;
  const received = new Promise<void>((resolve) => (refundReceived = resolve));
  // The payments API makes the first refund and never answers it: the worker is killed while
  // it waits. A second request, were there one, would be answered at once.
  const payments = await startPaymentsApi({
    ledger: path.join(folder, 'killed.jsonl'),
    beforeAnswer: async () => {
      if (++requests > 1) return;
      refundReceived();
      await new Promise(() => undefined);
    },
  });
  process.env.PAYMENTS_URL = payments.url;
  // The worker that takes over is made (its workflows bundled) while the first one starts, and runs once that one is killed.
  const [worker, takeover] = await Promise.all([
    spawnSupportWorker(taskQueue, payments.url),
    createSupportWorker({ connection: env.nativeConnection, namespace: env.namespace, taskQueue, providers: fakeProviders(model) }),
  ]);
  try {
    model.reply(toolCall('refund', { orderId: 'A-1002' }));
    const session = await startSession(env.client, { AGENT_TASK_QUEUE: taskQueue }, { agent: 'support' });
    const turn = sendAndWait(session, 'Please refund order A-1002.');
    await received;
    worker.kill('SIGKILL');
    await once(worker, 'exit');

    // The other worker of the task queue takes the session over, and answers the refund it cannot know the outcome of.
    const { outcome, log } = await takeover.runUntil(async () => {
      const outcome = await turn;
      const log = await readLog(session);
      await endSession(session);
      return { outcome, log };
    });
    assert.equal(outcome.status, 'failed');
    assert.deepEqual(
      log.flatMap((event) => (event.type === 'tool/result' ? [[event.name, event.code]] : [])),
      [['refund', 'TOOL_OUTCOME_UNKNOWN']],
    );
    assert.equal(requests, 1);
    assert.deepEqual((await payments.refunds()).map((made) => made.orderId), ['A-1002']);
  } finally {
    worker.kill('SIGKILL');
    await payments.close();
  }
});

/** `npm run worker` as a process of its own, on the test's server and fake model; resolves once it polls. */
async function spawnSupportWorker(taskQueue: string, paymentsUrl: string) {
  const { ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL } = model.providerEnv();
  const worker = spawn(process.execPath, [fileURLToPath(new URL('../src/worker.js', import.meta.url))], {
    env: { ...process.env, TEMPORAL_ADDRESS: env.address, TASK_QUEUE: taskQueue, ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, PAYMENTS_URL: paymentsUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Its output is kept for the failure message: the SDK logs each poller's start.
  let printed = '';
  const onOutput = (chunk: Buffer) => (printed += chunk.toString());
  worker.stdout.on('data', onOutput);
  worker.stderr.on('data', onOutput);
  await new Promise<void>((resolve, reject) => {
    worker.stdout.on('data', () => printed.includes('support worker: polling') && resolve());
    worker.once('exit', (code) => reject(new Error(`the worker exited (${code}) before it polled:\n${printed}`)));
  });
  return worker;
}
