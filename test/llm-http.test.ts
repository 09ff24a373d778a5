import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isAbortError } from '../activities/llm/abort-error';
import { postStream, readBodyText, type PostStreamOptions } from '../activities/llm/http';
import { LlmError } from '../activities/llm/llm-error';
import { barrier } from './support/barrier';

/**
 * postStream against a real local HTTP server whose every move the test controls, so
 * silences, pings, resets and disconnections are real socket events, not mocks.
 */

type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

let server: Server;
let baseUrl: string;
let handler: Handler;
/** Resolves when the server sees the client go away before the response finished. */
let clientLeft: Promise<void>;
let markClientLeft: () => void;
const agent = new Agent();

beforeAll(async () => {
  server = createServer((req, res) => {
    res.on('close', () => {
      if (!res.writableFinished) markClientLeft();
    });
    res.on('error', () => {});
    void Promise.resolve(handler(req, res)).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await agent.close();
});

beforeEach(() => {
  clientLeft = new Promise((resolve) => (markClientLeft = resolve));
});

function options(over: Partial<PostStreamOptions> = {}): PostStreamOptions {
  return {
    dispatcher: agent,
    provider: 'anthropic',
    url: `${baseUrl}/v1/messages`,
    headers: { 'content-type': 'application/json' },
    body: '{}',
    signal: new AbortController().signal,
    idleTimeoutMs: 5_000,
    ...over,
  };
}

async function collect(body: AsyncIterable<Uint8Array>): Promise<string> {
  let text = '';
  for await (const chunk of body) text += Buffer.from(chunk).toString('utf8');
  return text;
}

async function failure(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a failure');
}

function sse(res: ServerResponse) {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.flushHeaders();
}

describe('postStream', () => {
  it('returns the status, the headers and the body, and reports every chunk', async () => {
    // The second piece is written only once the client has read the first: two chunks, by order.
    const firstRead = barrier();
    handler = async (req, res) => {
      let body = '';
      for await (const c of req) body += c;
      sse(res);
      res.write(`data: ${body}\n\n`);
      await firstRead.wait();
      res.end('data: done\n\n');
    };
    const sizes: number[] = [];
    const res = await postStream(
      options({
        body: '{"hello":1}',
        onBytes: (n) => {
          sizes.push(n);
          firstRead.open();
        },
      }),
    );
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream');
    expect(res.endpoint).toBe('POST /v1/messages');
    const text = await collect(res.body);
    expect(text).toBe('data: {"hello":1}\n\ndata: done\n\n');
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(Buffer.byteLength(text));
    expect(sizes.length).toBeGreaterThanOrEqual(2);
  });

  it('returns an error status without throwing: the caller classifies it', async () => {
    handler = (_req, res) => {
      res.writeHead(529, { 'content-type': 'application/json', 'retry-after': '2' });
      res.end('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}');
    };
    const res = await postStream(options());
    expect(res.status).toBe(529);
    expect(res.headers['retry-after']).toBe('2');
    expect(await readBodyText(res)).toContain('overloaded_error');
  });

  describe('the idle timer', () => {
    it('cuts a body that goes silent: network_error "no data for N ms", and the server sees the client leave', async () => {
      handler = (_req, res) => {
        sse(res);
        res.write('data: first\n\n');
        // then nothing, forever
      };
      const res = await postStream(options({ idleTimeoutMs: 200 }));
      const started = Date.now();
      const e = await failure(collect(res.body));
      expect(LlmError.is(e)).toBe(true);
      expect(e).toMatchObject({ type: 'network_error', retryable: true });
      expect((e as Error).message).toBe('anthropic POST /v1/messages → network_error: no data for 200 ms');
      expect(Date.now() - started).toBeGreaterThanOrEqual(150);
      await clientLeft;
    });

    it('cuts a server that never sends the response headers', async () => {
      handler = () => {};
      const e = await failure(postStream(options({ idleTimeoutMs: 200 })));
      expect(e).toMatchObject({ type: 'network_error', retryable: true });
      expect((e as Error).message).toContain('no data for 200 ms');
      await clientLeft;
    });

    it('is kept alive by pings: a stall longer than the limit, filled with comments, completes', async () => {
      handler = async (_req, res) => {
        sse(res);
        res.write('data: thinking\n\n');
        for (let i = 0; i < 8; i++) {
          await sleep(60);
          res.write(': ping\n\n');
        }
        res.end('data: answer\n\n');
      };
      // 480 ms of thinking against a 300 ms limit: only the pings keep it alive.
      const res = await postStream(options({ idleTimeoutMs: 300 }));
      expect(await collect(res.body)).toContain('data: answer');
    });

    it('does not count time the consumer spends on a chunk as silence', async () => {
      // Frames 40 ms apart, well inside the 100 ms limit; the consumer then spends 250 ms on
      // each chunk it reads, long past the limit: only time without bytes may count.
      handler = async (_req, res) => {
        sse(res);
        for (let i = 0; i < 5; i++) {
          res.write('data: a\n\n');
          await sleep(40);
        }
        res.end();
      };
      const res = await postStream(options({ idleTimeoutMs: 100, headers: {} }));
      let text = '';
      let chunks = 0;
      for await (const chunk of res.body) {
        text += Buffer.from(chunk as Uint8Array).toString();
        chunks++;
        await sleep(250);
      }
      expect(text.match(/data: a/g)).toHaveLength(5);
      expect(chunks).toBeGreaterThan(1);
    });

    it("wins over a dispatcher's shorter undici timeouts, which are set behind it per request", async () => {
      const impatient = new Agent({ headersTimeout: 100, bodyTimeout: 100 });
      try {
        handler = async (_req, res) => {
          await sleep(250);
          sse(res);
          res.write('data: a\n\n');
          await sleep(250);
          res.end('data: b\n\n');
        };
        const res = await postStream(options({ dispatcher: impatient, idleTimeoutMs: 1_000 }));
        expect(await collect(res.body)).toBe('data: a\n\ndata: b\n\n');
      } finally {
        await impatient.close();
      }
    });
  });

  describe('abort', () => {
    it('mid-body closes the request at once and throws an abort error, never a network_error', async () => {
      handler = (_req, res) => {
        sse(res);
        res.write('data: first\n\n');
      };
      const controller = new AbortController();
      const res = await postStream(options({ signal: controller.signal }));
      const it = res.body[Symbol.asyncIterator]();
      await it.next();
      const started = Date.now();
      // Aborted while the next read waits for bytes that never come.
      const reading = failure(it.next());
      controller.abort(new Error('user pressed Esc'));
      const e = await reading;
      expect(isAbortError(e)).toBe(true);
      expect(LlmError.is(e)).toBe(false);
      expect(Date.now() - started).toBeLessThan(1_000);
      await clientLeft;
    });

    it('while waiting for the headers throws an abort error', async () => {
      const arrived = barrier();
      handler = () => arrived.open();
      const controller = new AbortController();
      const calling = failure(postStream(options({ signal: controller.signal })));
      // The server has the request and sends no headers: the client is waiting for them.
      await arrived.wait();
      controller.abort();
      const e = await calling;
      expect(isAbortError(e)).toBe(true);
      await clientLeft;
    });

    it('before the call sends nothing', async () => {
      let requests = 0;
      handler = (_req, res) => {
        requests++;
        res.end();
      };
      const e = await failure(postStream(options({ signal: AbortSignal.abort() })));
      expect(isAbortError(e)).toBe(true);
      // The next call on the same dispatcher reaches the server; had the aborted one been sent, it would have come first.
      await collect((await postStream(options())).body);
      expect(requests).toBe(1);
    });

    it("an idle cut leaves the caller's signal alone, so it is never mistaken for a user abort", async () => {
      handler = (_req, res) => sse(res);
      const controller = new AbortController();
      const res = await postStream(options({ signal: controller.signal, idleTimeoutMs: 50 }));
      const e = await failure(collect(res.body));
      expect(isAbortError(e)).toBe(false);
      expect(e).toMatchObject({ type: 'network_error' });
      expect(controller.signal.aborted).toBe(false);
    });
  });

  describe('network failures', () => {
    it('a refused connection is a retryable network_error whose message has no query string', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise((resolve) => closed.close(resolve));
      const e = await failure(postStream(options({ url: `http://127.0.0.1:${port}/v1beta/models/m:streamGenerateContent?alt=sse&key=SECRET` })));
      expect(e).toMatchObject({ type: 'network_error', retryable: true });
      expect((e as Error).message).toMatch(/^anthropic POST \/v1beta\/models\/m:streamGenerateContent → network_error: ECONNREFUSED/);
      expect((e as Error).message).not.toContain('SECRET');
    });

    it('a socket destroyed mid-body is a retryable network_error', async () => {
      const partialRead = barrier();
      handler = async (_req, res) => {
        sse(res);
        res.write('data: partial\n\n');
        await partialRead.wait();
        res.socket?.destroy();
      };
      const res = await postStream(options({ onBytes: () => partialRead.open() }));
      const e = await failure(collect(res.body));
      expect(e).toMatchObject({ type: 'network_error', retryable: true });
    });

    it('an unresolvable host is a retryable network_error', async () => {
      const e = await failure(postStream(options({ url: 'http://does-not-exist.invalid/v1/messages' })));
      expect(e).toMatchObject({ type: 'network_error', retryable: true });
    });
  });

  it('closes the connection when the consumer stops reading early', async () => {
    handler = async (_req, res) => {
      sse(res);
      for (;;) {
        res.write('data: more\n\n');
        await sleep(10);
        if (res.destroyed) return;
      }
    };
    const res = await postStream(options());
    for await (const _ of res.body) break;
    await clientLeft;
  });

  it('reads at most maxBytes of an error body and closes the rest', async () => {
    handler = async (_req, res) => {
      res.writeHead(500);
      for (;;) {
        res.write('x'.repeat(1024));
        await sleep(5);
        if (res.destroyed) return;
      }
    };
    const res = await postStream(options());
    expect((await readBodyText(res, 4096)).length).toBe(4096);
    await clientLeft;
  });

  it('rejects a non-positive idle timeout as a programming error', async () => {
    await expect(postStream(options({ idleTimeoutMs: 0 }))).rejects.toThrow(RangeError);
  });
});
