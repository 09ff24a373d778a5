import { appendFile, readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Refund {
  idempotencyKey: string;
  orderId: string;
  amountCents: number;
  refundedAt: string;
}

export interface PaymentsApi {
  readonly url: string;
  /** The ledger: every refund made, oldest first. */
  refunds(): Promise<Refund[]>;
  close(): Promise<void>;
}

export interface PaymentsApiOptions {
  /** The ledger file: one JSON line per refund. */
  ledger: string;
  /** Default: a free port. */
  port?: number;
  /** Awaited after a refund is written and before it is answered; a test holds it there to kill the worker mid-call. */
  beforeAnswer?: (refund: Refund) => Promise<void>;
}

/**
 * A stand-in for the payments provider the `refund` tool calls, as small as one can be:
 * `POST /refunds` writes a refund to the ledger, keyed by its `Idempotency-Key`, and a
 * request with a key the ledger already holds answers that refund and writes nothing.
 */
export async function startPaymentsApi({ ledger, port = 0, beforeAnswer }: PaymentsApiOptions): Promise<PaymentsApi> {
  const refunds = async (): Promise<Refund[]> => {
    const text = await readFile(ledger, 'utf8').catch(() => '');
    return text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Refund);
  };
  // One refund at a time, so two requests with one key cannot both find it missing.
  let queue = Promise.resolve<unknown>(undefined);
  const refundOnce = (idempotencyKey: string, body: { orderId: string; amountCents: number }) => {
    const made = queue.then(async () => {
      const earlier = (await refunds()).find((refund) => refund.idempotencyKey === idempotencyKey);
      if (earlier) return earlier;
      const refund = { idempotencyKey, orderId: body.orderId, amountCents: body.amountCents, refundedAt: new Date().toISOString() };
      await appendFile(ledger, `${JSON.stringify(refund)}\n`);
      return refund;
    });
    queue = made.catch(() => undefined);
    return made;
  };

  const server = createServer(async (request, response) => {
    const key = request.headers['idempotency-key'];
    if (request.method !== 'POST' || request.url !== '/refunds' || typeof key !== 'string') {
      response.writeHead(400).end('POST /refunds with an Idempotency-Key header\n');
      return;
    }
    const { orderId, amountCents } = await bodyOf(request)
      .then((text) => JSON.parse(text) as Record<string, unknown>)
      .catch(() => ({}) as Record<string, unknown>);
    if (typeof orderId !== 'string' || typeof amountCents !== 'number') {
      response.writeHead(400).end('a refund is {"orderId": string, "amountCents": number}\n');
      return;
    }
    const refund = await refundOnce(key, { orderId, amountCents });
    await beforeAnswer?.(refund);
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(refund));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    refunds,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

async function bodyOf(request: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of request) body += chunk;
  return body;
}
