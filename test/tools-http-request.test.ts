import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { compileHttpAllowlist } from '../activities/tools/http-allowlist';
import { runHttpRequest, systemResolveHost, type HttpToolOptions, type ResolveHost } from '../activities/tools/http-request';
import type { HttpRequestInput } from '../contracts/tools/http-request';
import { makeTestCertificates, type TestCertificates } from './support/test-certificates';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

let server: Server;
let origin: string;
let port: number;
let seen: Seen[] = [];
/** Resolves when the server sees the next held request, and when that request's socket closes. */
let held: { arrived: Promise<void>; closed: Promise<void> };
let heldSignals: { arrived: () => void; closed: () => void };
const dispatcher = new Agent();

function resetHeld() {
  let arrived!: () => void;
  let closed!: () => void;
  held = { arrived: new Promise<void>((r) => (arrived = r)), closed: new Promise<void>((r) => (closed = r)) };
  heldSignals = { arrived, closed };
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() });
      switch (req.url) {
        case '/hello':
          res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': 12, 'x-noise': 'hidden' }).end(req.method === 'HEAD' ? undefined : 'hello, agent');
          return;
        case '/missing':
          res.writeHead(404, { 'content-type': 'text/plain', 'content-length': 13 }).end('no such thing');
          return;
        case '/orders':
          res.writeHead(201, { 'content-type': 'application/json', 'content-length': 8 }).end('{"id":7}');
          return;
        case '/big':
          res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(200_000));
          return;
        case '/endless': {
          // Chunked and never ending: the cap must stop reading, not wait for the end.
          res.writeHead(200, { 'content-type': 'text/plain' });
          const timer = setInterval(() => res.write('y'.repeat(16_384)), 5);
          res.on('close', () => clearInterval(timer));
          return;
        }
        case '/utf8-edge':
          res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('ab€€');
          return;
        case '/redirect':
          res.writeHead(302, { location: 'http://elsewhere.invalid/steal' }).end();
          return;
        case '/png':
          res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0]));
          return;
        case '/unavailable':
          res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': '30' }).end('try later');
          return;
        case '/hold':
          res.on('close', () => heldSignals.closed());
          heldSignals.arrived();
          return; // never answers
        default:
          res.writeHead(500).end('unexpected path');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await dispatcher.close();
});

beforeEach(() => {
  seen = [];
  resetHeld();
});

const options = (overrides: Partial<HttpToolOptions> = {}): HttpToolOptions => ({
  dispatcher,
  allowlist: compileHttpAllowlist([`127.0.0.1:${port}`]),
  maxResponseBytes: 64 * 1024,
  timeoutMs: 5_000,
  resolveHost: systemResolveHost,
  ...overrides,
});

/** Names resolve as this table says, and only these: no query leaves the machine. */
const resolveFrom =
  (table: Record<string, string[]>): ResolveHost =>
  async (hostname) => {
    const addresses = table[hostname];
    if (addresses === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address }));
  };

const run = (input: HttpRequestInput, overrides: Partial<HttpToolOptions> = {}, context: { signal?: AbortSignal; idempotencyKey?: string } = {}) =>
  runHttpRequest(input, options(overrides), { signal: context.signal ?? new AbortController().signal, idempotencyKey: context.idempotencyKey });

describe('http_request: allowlist', () => {
  it('blocks every host while the allowlist is empty, without sending anything', async () => {
    const outcome = await run({ method: 'GET', url: `${origin}/hello` }, { allowlist: compileHttpAllowlist([]) });
    expect(outcome).toEqual({
      code: 'error',
      content: `Request blocked: no hosts are allowed (AGENT_HTTP_ALLOWLIST is empty), so http_request cannot reach 127.0.0.1:${port}.`,
    });
    expect(seen).toHaveLength(0);
  });

  it('blocks a host that is not listed and names the allowed ones', async () => {
    const outcome = await run({ method: 'GET', url: `http://localhost:${port}/hello` });
    expect(outcome.code).toBe('error');
    expect(outcome.content).toBe(`Request blocked: localhost:${port} is not in the allowlist (AGENT_HTTP_ALLOWLIST). Allowed: 127.0.0.1:${port}.`);
    expect(seen).toHaveLength(0);
  });

  it('blocks a listed host on another port', async () => {
    const outcome = await run({ method: 'GET', url: `${origin}/hello` }, { allowlist: compileHttpAllowlist(['127.0.0.1']) });
    expect(outcome.content).toContain('is not in the allowlist');
    expect(seen).toHaveLength(0);
  });
});

describe('http_request: addresses a name resolves to', () => {
  const restricted = (entry: string) =>
    `http_request reaches loopback, link-local and private addresses only when AGENT_HTTP_ALLOWLIST lists that IP itself (${entry}), never through a host name or a wildcard. The request was not sent.`;

  it('refuses a listed name that resolves to loopback (localhost, by the system resolver), without sending anything', async () => {
    const outcome = await run({ method: 'GET', url: `http://localhost:${port}/hello` }, { allowlist: compileHttpAllowlist([`localhost:${port}`]) });
    expect(outcome.code).toBe('error');
    expect(outcome.content).toMatch(new RegExp(`^Request blocked: localhost:${port} resolves to (127\\.0\\.0\\.1|::1), which is in the loopback range; `));
    expect(seen).toHaveLength(0);
  });

  it('refuses a name under a listed *.domain whose DNS answers 127.0.0.1, and names the entry that would open it', async () => {
    const outcome = await run(
      { method: 'POST', url: `http://rebound.example.test:${port}/orders`, body: 'x' },
      { allowlist: compileHttpAllowlist([`*.example.test:${port}`]), resolveHost: resolveFrom({ 'rebound.example.test': ['127.0.0.1'] }) },
      { idempotencyKey: 'agent-1' },
    );
    expect(outcome).toEqual({
      code: 'error',
      content: `Request blocked: rebound.example.test:${port} resolves to 127.0.0.1, which is in the loopback range; ${restricted(`127.0.0.1:${port}`)}`,
    });
    expect(seen).toHaveLength(0);
  });

  it('refuses a name when any of its addresses is restricted, even if another is public', async () => {
    const outcome = await run(
      { method: 'GET', url: `http://split.example.test:${port}/hello` },
      { allowlist: compileHttpAllowlist([`split.example.test:${port}`]), resolveHost: resolveFrom({ 'split.example.test': ['127.0.0.1', '198.51.100.7'] }) },
    );
    expect(outcome.content).toContain(`split.example.test:${port} resolves to 127.0.0.1, which is in the loopback range`);
    expect(seen).toHaveLength(0);
  });

  it('reaches a loopback address through a name when the IP itself is listed, keeping the name in Host', async () => {
    const outcome = await run(
      { method: 'GET', url: `http://app.example.test:${port}/hello` },
      { allowlist: compileHttpAllowlist([`app.example.test:${port}`, `127.0.0.1:${port}`]), resolveHost: resolveFrom({ 'app.example.test': ['127.0.0.1'] }) },
    );
    expect(outcome.code).toBe('ok');
    expect(seen).toHaveLength(1);
    expect(seen[0]!.headers.host).toBe(`app.example.test:${port}`);
  });

  it('does not let a listed IP on one port open it on another through a name', async () => {
    const outcome = await run(
      { method: 'GET', url: `http://app.example.test:${port}/hello` },
      { allowlist: compileHttpAllowlist([`app.example.test:${port}`, '127.0.0.1:1']), resolveHost: resolveFrom({ 'app.example.test': ['127.0.0.1'] }) },
    );
    expect(outcome.content).toContain('which is in the loopback range');
    expect(seen).toHaveLength(0);
  });

  it('refuses a loopback IP literal that only * matches', async () => {
    const outcome = await run({ method: 'GET', url: `${origin}/hello` }, { allowlist: compileHttpAllowlist(['*']) });
    expect(outcome).toEqual({ code: 'error', content: `Request blocked: 127.0.0.1:${port} is in the loopback range; ${restricted(`127.0.0.1:${port}`)}` });
    expect(seen).toHaveLength(0);
  });

  it('refuses the IPv4-mapped form of a listed loopback IP', async () => {
    const outcome = await run({ method: 'GET', url: `http://[::ffff:127.0.0.1]:${port}/hello` }, { allowlist: compileHttpAllowlist(['*', `127.0.0.1:${port}`]) });
    expect(outcome.content).toContain(`[::ffff:7f00:1]:${port} is in the IPv4-mapped range`);
    expect(seen).toHaveLength(0);
  });

  it('tries the next address of a name when a connection is refused before anything was sent', async () => {
    // The server listens on 127.0.0.1 only: [::1] refuses the port (or has no IPv6 at all).
    const outcome = await run(
      { method: 'GET', url: `http://twice.example.test:${port}/hello` },
      {
        allowlist: compileHttpAllowlist([`twice.example.test:${port}`, `[::1]:${port}`, `127.0.0.1:${port}`]),
        resolveHost: resolveFrom({ 'twice.example.test': ['::1', '127.0.0.1'] }),
      },
    );
    expect(outcome.code).toBe('ok');
    expect(seen).toHaveLength(1);
  });

  it('connects to the address it checked, never to a second resolution of the name', async () => {
    // The system resolver says localhost is 127.0.0.1, where the server listens; the checked answer is [::1], where nothing does.
    const outcome = await run(
      { method: 'GET', url: `http://localhost:${port}/hello` },
      { allowlist: compileHttpAllowlist([`localhost:${port}`, `[::1]:${port}`]), resolveHost: resolveFrom({ localhost: ['::1'] }) },
    );
    expect(outcome.code).toBe('error');
    expect(outcome.content).toMatch(/The request was not sent\.$/);
    expect(seen).toHaveLength(0);
  });

  it('reports a name that does not resolve as an error result that says nothing was sent', async () => {
    const outcome = await run(
      { method: 'GET', url: `http://nowhere.example.test:${port}/hello` },
      { allowlist: compileHttpAllowlist([`*.example.test:${port}`]), resolveHost: resolveFrom({}) },
    );
    expect(outcome).toEqual({
      code: 'error',
      content: `GET http://nowhere.example.test:${port}/hello failed: getaddrinfo ENOTFOUND nowhere.example.test (ENOTFOUND). The request was not sent.`,
    });
  });

  it('stops waiting for a resolution that never ends at the deadline', async () => {
    const outcome = await run(
      { method: 'GET', url: `http://slow.example.test:${port}/hello` },
      { allowlist: compileHttpAllowlist([`*.example.test:${port}`]), resolveHost: () => new Promise(() => {}), timeoutMs: 200 },
    );
    expect(outcome).toEqual({ code: 'error', content: `GET http://slow.example.test:${port}/hello timed out after 200 ms.` });
  });
});

describe('http_request: TLS to the checked address', () => {
  let certificates: TestCertificates;
  let tls: TlsServer;
  let tlsPort: number;
  let trusting: Agent;

  beforeAll(async () => {
    certificates = await makeTestCertificates();
    tls = createTlsServer({ cert: await readFile(certificates.serverCert), key: await readFile(certificates.serverKey) }, (req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`secure ${req.headers.host}`);
    });
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
    tlsPort = (tls.address() as AddressInfo).port;
    trusting = new Agent({ connect: { ca: await readFile(certificates.caCert) } });
  });

  afterAll(async () => {
    await trusting.close();
    tls.closeAllConnections();
    await new Promise<void>((resolve) => tls.close(() => resolve()));
    await certificates.remove();
  });

  const overTls = (hostname: string) =>
    run(
      { method: 'GET', url: `https://${hostname}:${tlsPort}/` },
      { dispatcher: trusting, allowlist: compileHttpAllowlist([`${hostname}:${tlsPort}`, `127.0.0.1:${tlsPort}`]), resolveHost: resolveFrom({ [hostname]: ['127.0.0.1'] }) },
    );

  it('connects to the address but verifies the certificate for the name (and sends it as SNI and Host)', async () => {
    expect(await overTls('localhost')).toEqual({ code: 'ok', content: `HTTP 200 OK\ncontent-type: text/plain\n\nsecure localhost:${tlsPort}` });
  });

  it('refuses a certificate that is for the address but not for the name', async () => {
    const outcome = await overTls('other.example.test');
    expect(outcome.code).toBe('error');
    expect(outcome.content).toContain('(ERR_TLS_CERT_ALTNAME_INVALID)');
  });
});

describe('http_request: responses', () => {
  it('returns the status line, selected headers and the body', async () => {
    expect(await run({ method: 'GET', url: `${origin}/hello` })).toEqual({
      code: 'ok',
      content: 'HTTP 200 OK\ncontent-type: text/plain; charset=utf-8\ncontent-length: 12\n\nhello, agent',
    });
  });

  it('returns a 404 as an error result with the body, not as a failure', async () => {
    const outcome = await run({ method: 'GET', url: `${origin}/missing` });
    expect(outcome).toEqual({ code: 'error', content: 'HTTP 404 Not Found\ncontent-type: text/plain\ncontent-length: 13\n\nno such thing' });
  });

  it('shows retry-after on a 503', async () => {
    const outcome = await run({ method: 'GET', url: `${origin}/unavailable` });
    expect(outcome.code).toBe('error');
    expect(outcome.content).toContain('HTTP 503 Service Unavailable');
    expect(outcome.content).toContain('retry-after: 30');
  });

  it('returns no body for HEAD', async () => {
    expect(await run({ method: 'HEAD', url: `${origin}/hello` })).toEqual({
      code: 'ok',
      content: 'HTTP 200 OK\ncontent-type: text/plain; charset=utf-8\ncontent-length: 12',
    });
  });

  it('does not follow a redirect but shows where it points', async () => {
    const outcome = await run({ method: 'GET', url: `${origin}/redirect` });
    expect(outcome.code).toBe('ok');
    expect(outcome.content).toContain('HTTP 302 Found\nlocation: http://elsewhere.invalid/steal');
    expect(outcome.content).toContain('[redirect not followed; to follow it, call http_request with the Location URL]');
    expect(seen.map((s) => s.url)).toEqual(['/redirect']);
  });

  it('describes a binary body instead of printing it', async () => {
    const outcome = await run({ method: 'GET', url: `${origin}/png` });
    expect(outcome.content).toContain('[binary body not shown: image/png, 7 bytes]');
  });
});

describe('http_request: size cap', () => {
  it('cuts the body at maxResponseBytes and says so', async () => {
    const outcome = await run({ method: 'GET', url: `${origin}/big` }, { maxResponseBytes: 1_000 });
    expect(outcome.code).toBe('ok');
    expect(outcome.content).toContain(`\n\n${'x'.repeat(1_000)}\n\n[body cut at 1000 bytes; the response is longer]`);
    expect(outcome.content).not.toContain('x'.repeat(1_001));
  });

  it('stops reading an endless body at the cap', async () => {
    const outcome = await run({ method: 'GET', url: `${origin}/endless` }, { maxResponseBytes: 50_000 });
    expect(outcome.content).toContain('[body cut at 50000 bytes; the response is longer]');
  });

  it('does not split a multi-byte character at the cap', async () => {
    // "ab€€" is 8 bytes; 4 bytes end inside the first "€".
    const outcome = await run({ method: 'GET', url: `${origin}/utf8-edge` }, { maxResponseBytes: 4 });
    expect(outcome.content).toContain('\n\nab\n\n[body cut at 4 bytes');
    expect(outcome.content).not.toContain('\uFFFD');
  });
});

describe('http_request: side effects', () => {
  it('sends POST once with the Idempotency-Key header and the body', async () => {
    const outcome = await run(
      { method: 'POST', url: `${origin}/orders`, headers: { 'content-type': 'application/json' }, body: '{"item":"tea"}' },
      {},
      { idempotencyKey: 'agent-0123' },
    );
    expect(outcome).toEqual({ code: 'ok', content: 'HTTP 201 Created\ncontent-type: application/json\ncontent-length: 8\n\n{"id":7}' });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'POST', body: '{"item":"tea"}' });
    expect(seen[0]!.headers['idempotency-key']).toBe('agent-0123');
    expect(seen[0]!.headers['content-type']).toBe('application/json');
  });

  it('sends no Idempotency-Key on GET', async () => {
    await run({ method: 'GET', url: `${origin}/hello` }, {}, { idempotencyKey: 'agent-0123' });
    expect(seen[0]!.headers).not.toHaveProperty('idempotency-key');
  });
});

describe('http_request: time and cancellation', () => {
  it('turns a target that never answers into an error result at the deadline', async () => {
    const outcome = await run({ method: 'GET', url: `${origin}/hold` }, { timeoutMs: 200 });
    expect(outcome).toEqual({ code: 'error', content: `GET ${origin}/hold timed out after 200 ms.` });
    await held.closed;
  });

  it('warns that a timed-out POST may have taken effect', async () => {
    const outcome = await run({ method: 'POST', url: `${origin}/hold`, body: 'x' }, { timeoutMs: 200 }, { idempotencyKey: 'agent-77' });
    expect(outcome.code).toBe('error');
    expect(outcome.content).toContain('timed out after 200 ms. The request may have reached the server and had its effect; check before repeating it.');
    expect(outcome.content).toContain('Idempotency-Key agent-77');
  });

  it('aborts the request on cancellation and throws the cancellation reason', async () => {
    const controller = new AbortController();
    const pending = run({ method: 'GET', url: `${origin}/hold` }, {}, { signal: controller.signal });
    await held.arrived;
    const reason = new Error('activity cancelled');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await held.closed; // the server saw the connection go
  });

  it('does not send anything when already cancelled', async () => {
    const controller = new AbortController();
    controller.abort(new Error('cancelled before start'));
    await expect(run({ method: 'POST', url: `${origin}/orders` }, {}, { signal: controller.signal })).rejects.toThrow('cancelled before start');
    expect(seen).toHaveLength(0);
  });

  it('says nothing was sent when a header value cannot be written (outside Latin-1), even for a POST', async () => {
    const outcome = await run({ method: 'POST', url: `${origin}/orders`, headers: { 'x-note': 'tea 😀' }, body: 'x' }, {}, { idempotencyKey: 'agent-2' });
    expect(outcome).toEqual({ code: 'error', content: `POST ${origin}/orders failed: invalid x-note header (UND_ERR_INVALID_ARG). The request was not sent.` });
    expect(seen).toHaveLength(0);
  });

  it('reports a refused connection as an error result that says nothing was sent', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const outcome = await run(
      { method: 'POST', url: `http://127.0.0.1:${deadPort}/x` },
      { allowlist: compileHttpAllowlist([`127.0.0.1:${deadPort}`]) },
      { idempotencyKey: 'k' },
    );
    expect(outcome.code).toBe('error');
    expect(outcome.content).toMatch(new RegExp(`^POST http://127\\.0\\.0\\.1:${deadPort}/x failed: .*\\(ECONNREFUSED\\)\\. The request was not sent\\.$`));
  });
});
