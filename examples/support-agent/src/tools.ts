import { z } from 'zod';
import { defineTool, ToolError } from 'durable-agent-worker';

/** The shop's orders; a project of your own reads its database here. */
const ORDERS = new Map([
  ['A-1001', { item: 'two books', totalCents: 3_450, status: 'delivered' }],
  ['A-1002', { item: 'a desk lamp', totalCents: 5_900, status: 'delivered' }],
]);

function findOrder(orderId: string) {
  const order = ORDERS.get(orderId);
  // The model reads this and asks the customer again, instead of failing the turn.
  if (!order) throw new ToolError(`There is no order ${orderId}; ask the customer for the id on the receipt.`);
  return { orderId, ...order };
}

export const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'Looks an order up by its id (e.g. "A-1001"): what it holds, its total and where it is.',
  input: z.object({ orderId: z.string().describe('The order id on the receipt.') }),
  sideEffects: false,
  run: ({ orderId }) => findOrder(orderId),
});

export const refund = defineTool({
  name: 'refund',
  description: 'Refunds an order in full, to the card it was paid with.',
  input: z.object({ orderId: z.string() }),
  sideEffects: true,
  // A worker killed in the middle of a refund is noticed within 3 s; the refund is never tried again.
  heartbeatTimeoutMs: 3_000,
  async run({ orderId }, { idempotencyKey, signal }) {
    const order = findOrder(orderId);
    // The payments API refunds once per key, so even a request it receives twice pays out once.
    const response = await fetch(new URL('/refunds', process.env.PAYMENTS_URL ?? 'http://127.0.0.1:4010'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
      body: JSON.stringify({ orderId, amountCents: order.totalCents }),
      signal,
    });
    if (!response.ok) throw new Error(`the payments API answered ${response.status} to the refund of ${orderId}`);
    return await response.json();
  },
});
