import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { text, toolCall, type FakeModel } from 'durable-agent-worker/testing';
import { createSupportWorker } from '../../src/support-worker.js';
import { submitTicket } from '../../src/tickets.js';
import type { Ticket } from '../../src/workflows.js';
import { fakeProviders } from './fake-providers.js';

export const REFUND_TICKET: Ticket = { id: 'T-1', question: 'Order A-1001 arrived with a torn cover. Can I have my money back?' };
export const REFUND_ANSWER = 'I have refunded order A-1001 in full: $34.50 goes back to your card.';

/**
 * The shop's worker answers a ticket on the fake model, which looks the order up, refunds
 * it and says so: the happy path, as the test runs it and as the recorded history holds it.
 */
export async function answerRefundTicket(env: TestWorkflowEnvironment, model: FakeModel, taskQueue: string): Promise<string> {
  model.reply(toolCall('lookup_order', { orderId: 'A-1001' }), toolCall('refund', { orderId: 'A-1001' }), text(REFUND_ANSWER));
  const worker = await createSupportWorker({ connection: env.nativeConnection, namespace: env.namespace, taskQueue, providers: fakeProviders(model) });
  return worker.runUntil(submitTicket(env.client, taskQueue, REFUND_TICKET));
}
