/**
 * Records the histories test/replay.test.ts replays: the refund ticket of the happy path,
 * run once on a dev server of its own against the fake model. Run it again (`npm run
 * record-history`) when a change of the shop's workflow is meant to change its history.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { exportHistory } from 'durable-agent-worker/client';
import { startFakeModel } from 'durable-agent-worker/testing';
import { startPaymentsApi } from '../src/payments-api.js';
import { childSessionId, HISTORIES } from '../test/support/histories.js';
import { answerRefundTicket, REFUND_TICKET } from '../test/support/refund-ticket.js';
import { startTestServer } from '../test/support/test-server.js';

const [env, model] = await Promise.all([startTestServer(), startFakeModel()]);
const payments = await startPaymentsApi({ ledger: path.join(await mkdtemp(path.join(tmpdir(), 'support-agent-')), 'refunds.jsonl') });
process.env.PAYMENTS_URL = payments.url;
try {
  await answerRefundTicket(env, model, 'support-record');
  const ticketId = `ticket-${REFUND_TICKET.id}`;
  const sessionId = childSessionId(await env.client.workflow.getHandle(ticketId).fetchHistory());
  await writeFile(HISTORIES.ticket, await exportHistory(env.client, ticketId));
  await writeFile(HISTORIES.session, await exportHistory(env.client, sessionId));
  console.log(`recorded ${ticketId} and ${sessionId}`);
} finally {
  await payments.close();
  await model.close();
  await env.teardown();
}
