/**
 * Fuzzer of the built-in tools' trust boundary: the arguments a model writes for
 * `calculator`, `http_request`, `read_file` and `write_file`, sent through the tool runner
 * the activity calls (activities/tools/tool-activities.ts), with a real workspace (symlinks
 * in and out of it, a named pipe) and a real HTTP server on 127.0.0.1.
 *
 * Whatever the model writes, the answer is one outcome the model reads, `ok` or `error`:
 * never a throw, which would fail the step (or, retried, the turn); never a byte written
 * outside the workspace; never a connection anywhere but the one listed address. Names
 * resolve through a table here, so no DNS query leaves the machine, and the connector
 * refuses, and records, anything but 127.0.0.1.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { Agent, buildConnector } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateExpression, runCalculator } from '../../activities/tools/calculator';
import { createToolRunner, type ToolRunner } from '../../activities/tools';
import type { ResolveHost } from '../../activities/tools/http-request';
import { HTTP_METHODS } from '../../contracts/tools/http-request';
import { assertProperty } from '../support/fuzz';

let base: string;
let workspace: string;
let outside: string;
let server: Server;
let port: number;
let runner: ToolRunner;
let dispatcher: Agent;
/** Every connection the tool opened, as `host:port`. */
const connections: string[] = [];

/** Names the model may write resolve here only; the restricted answers are the SSRF cases. */
const NAMES: Record<string, string[]> = {
  localhost: ['127.0.0.1'],
  'api.fuzz.test': ['127.0.0.1'],
  'dual.fuzz.test': ['::1', '127.0.0.1'],
  'metadata.fuzz.test': ['169.254.169.254'],
  'intranet.fuzz.test': ['10.0.0.7', '127.0.0.1'],
  'mapped.fuzz.test': ['::ffff:127.0.0.1'],
};
const resolveHost: ResolveHost = async (hostname) => {
  const addresses = NAMES[hostname.replace(/\.$/, '')];
  if (addresses === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return addresses.map((address) => ({ address }));
};

beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'fuzz-builtin-tools-'));
  workspace = path.join(base, 'workspace');
  outside = path.join(base, 'outside');
  await mkdir(path.join(workspace, 'real'), { recursive: true });
  await mkdir(outside);
  await writeFile(path.join(outside, 'secret.txt'), 'top secret');
  await writeFile(path.join(workspace, 'real', 'a.txt'), 'inside');
  await symlink(outside, path.join(workspace, 'out'));
  await symlink(path.join(outside, 'secret.txt'), path.join(workspace, 'secret-link'));
  await symlink(path.join(outside, 'absent.txt'), path.join(workspace, 'dangling'));
  await symlink(path.join(workspace, 'real'), path.join(workspace, 'in'));
  execFileSync('mkfifo', [path.join(workspace, 'pipe')]);

  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url?.startsWith('/redirect')) res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      else if (req.url?.startsWith('/bin')) res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.from([0, 1, 2]));
      else res.writeHead(req.url?.startsWith('/missing') ? 404 : 200, { 'content-type': 'text/plain; charset=utf-8' }).end(`seen ${req.method} ${req.url}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;

  const connect = buildConnector({});
  dispatcher = new Agent({
    connect(options, callback) {
      connections.push(`${options.hostname}:${options.port}`);
      if (options.hostname !== '127.0.0.1') {
        callback(Object.assign(new Error(`the fuzzer refuses a connection to ${options.hostname}`), { code: 'EFUZZREFUSED' }), null);
        return;
      }
      connect(options, callback);
    },
  });
  runner = createToolRunner({
    dispatcher,
    workspaceDir: workspace,
    httpAllowlist: [`127.0.0.1:${port}`, `localhost:${port}`, `*.fuzz.test:*`],
    httpTimeoutMs: 2_000,
    maxFileBytes: 4_096,
    maxResponseBytes: 4_096,
    resolveHost,
  });
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await dispatcher.close();
  await rm(base, { recursive: true, force: true });
});

/** Everything under the base folder but the workspace: names, kinds and file contents. */
async function outsideState(): Promise<string[]> {
  const entries = await readdir(base, { recursive: true, withFileTypes: true });
  const state: string[] = [];
  for (const entry of entries) {
    const full = path.join(entry.parentPath, entry.name);
    if (full === workspace || full.startsWith(`${workspace}${path.sep}`)) continue;
    state.push(`${full} ${entry.isFile() ? await readFile(full, 'utf8') : entry.isDirectory() ? 'dir' : 'other'}`);
  }
  return state.sort();
}

const text = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }), fc.constantFrom('', ' ', '\0', '\r\n', 'ü', '😀', '%00', '../', '\\'));

const expression = fc.oneof(
  text,
  fc
    .array(fc.constantFrom('1', '2.5', '.5', '1e3', '1e400', 'pi', 'e', 'sqrt', 'ln', 'valueOf', '__proto__', 'constructor', 'toString', '(', ')', '+', '-', '*', '/', '%', '^', '**', ',', ' ', '×', 'x'), {
      maxLength: 30,
    })
    .map((tokens) => tokens.join('')),
  fc.integer({ min: 150, max: 400 }).map((depth) => `${'('.repeat(depth)}1${')'.repeat(depth)}`),
);

const pathSegment = fc.constantFrom('..', '.', '', 'real', 'a.txt', 'in', 'out', 'secret-link', 'dangling', 'pipe', 'new', 'x y', 'ü', '%2e%2e', '~', 'a\\b', '\0');
const relativePath = fc.array(pathSegment, { minLength: 1, maxLength: 5 }).map((segments) => segments.join('/'));
const filePath = fc.oneof(
  relativePath,
  fc.tuple(fc.constantFrom(() => `${workspace}/`, () => `${outside}/`, () => `${base}/`, () => '/', () => '/etc/', () => '//'), relativePath).map(([prefix, rest]) => `${prefix()}${rest}`),
  text,
  fc.integer({ min: 4_000, max: 5_000 }).map((n) => 'a'.repeat(n)),
);

/** Thunks: the port and folders exist only once beforeAll has run. */
const reachableHost = fc.constantFrom(() => '127.0.0.1', () => 'api.fuzz.test', () => 'API.Fuzz.Test.');
const refusedHost = fc.constantFrom(
  () => 'localhost',
  () => 'dual.fuzz.test',
  () => 'metadata.fuzz.test',
  () => 'intranet.fuzz.test',
  () => 'mapped.fuzz.test',
  () => 'unknown.fuzz.test',
  () => 'fuzz.test',
  () => 'example.com',
  () => '169.254.169.254',
  () => '10.0.0.1',
  () => '0.0.0.0',
  () => '0x7f.1',
  () => '2130706433',
  () => '[::1]',
  () => '[::ffff:127.0.0.1]',
  () => '[::]',
  () => 'xn--bcher-kva.fuzz.test',
);
const host = fc.oneof(reachableHost, refusedHost);
const portPart = fc.oneof({ weight: 3, arbitrary: fc.constant(() => `:${port}`) }, { weight: 1, arbitrary: fc.constantFrom(() => '', () => ':80', () => ':443', () => ':0', () => ':65536', () => ':1') });
const url = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(
        fc.oneof({ weight: 4, arbitrary: fc.constant('http://') }, { weight: 1, arbitrary: fc.constantFrom('https://', 'HTTP://', 'ftp://', 'file://', 'http:/', '') }),
        fc.constantFrom('', '', '', 'user:pass@', '127.0.0.1@', 'a@'),
        host,
        portPart,
        fc.constantFrom('/', '/redirect', '/bin', '/missing', '/a?b=c', '/%2e%2e/', '/ü', ''),
      )
      .map(([scheme, userinfo, h, p, rest]) => `${scheme}${userinfo}${h()}${p()}${rest}`),
  },
  { weight: 1, arbitrary: fc.webUrl() },
  { weight: 1, arbitrary: text },
);
const anyHeaders = fc.dictionary(
  fc.oneof(fc.constantFrom('content-type', 'x-a', 'Host', 'content-length', 'transfer-encoding', 'idempotency-key', 'accept-encoding', 'Authorization'), text),
  fc.oneof(text, fc.constantFrom('a\r\nx: y', 'ü', '😀', 'x'.repeat(10_000))),
  { maxKeys: 3 },
);
const fineHeaders = fc.dictionary(fc.constantFrom('content-type', 'x-request-id', 'Accept', 'authorization'), fc.constantFrom('text/plain', 'application/json', 'Bearer x', 'ü', '😀', ' padded ', ''), { maxKeys: 2 });

/** Mostly arguments the schema accepts, so that most calls reach the allowlist, the resolver and the server. */
const httpInput = fc.oneof(
  { weight: 4, arbitrary: fc.record({ method: fc.constantFrom('GET', 'HEAD'), url, headers: fineHeaders }, { requiredKeys: ['method', 'url'] }) },
  { weight: 2, arbitrary: fc.record({ method: fc.constantFrom('POST', 'PUT', 'PATCH', 'DELETE'), url, headers: fineHeaders, body: fc.oneof(text, fc.constant('x'.repeat(2_000))) }, { requiredKeys: ['method', 'url'] }) },
  { weight: 1, arbitrary: fc.record({ method: fc.oneof(fc.constantFrom(...HTTP_METHODS), fc.constantFrom('get', 'TRACE', 'CONNECT', '')), url, headers: anyHeaders, body: text }, { requiredKeys: ['method', 'url'] }) },
);

/** The arguments a model might write, well-formed or not, per tool, plus any JSON at all. */
const call = fc.oneof(
  { weight: 2, arbitrary: fc.record({ name: fc.constant('calculator'), input: fc.record({ expression }) }) },
  { weight: 4, arbitrary: fc.record({ name: fc.constant('http_request'), input: httpInput }) },
  { weight: 2, arbitrary: fc.record({ name: fc.constant('read_file'), input: fc.record({ path: filePath }) }) },
  { weight: 2, arbitrary: fc.record({ name: fc.constant('write_file'), input: fc.record({ path: filePath, content: fc.oneof(text, fc.constant('x'.repeat(5_000))) }) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      name: fc.constantFrom('calculator', 'http_request', 'read_file', 'write_file'),
      input: fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.record({ expression: text, path: text, url: text, method: text, content: fc.jsonValue({ maxDepth: 1 }) }, { requiredKeys: [] })),
    }),
  },
);

describe('built-in tool arguments (fuzz)', () => {
  it('are answered with one outcome the model reads: never a throw, a write outside the workspace or a connection off the allowlist', async () => {
    const before = await outsideState();
    await assertProperty(
      300,
      fc.asyncProperty(call, async ({ name, input }) => {
        connections.length = 0;
        const outcome = await runner({ name, input, callId: 'toolu_fuzz', idempotencyKey: 'agent-fuzz-key' }, { signal: new AbortController().signal });
        expect(['ok', 'error']).toContain(outcome.code);
        expect(typeof outcome.content).toBe('string');
        for (const connection of connections) expect(connection).toBe(`127.0.0.1:${port}`);
        expect(await outsideState()).toEqual(before);
      }),
    );
  });

  it('evaluates any expression to a finite number or an error with a position inside it', async () => {
    await assertProperty(
      1_000,
      fc.property(expression, (source) => {
        const result = evaluateExpression(source);
        if (result.ok) expect(Number.isFinite(result.value)).toBe(true);
        else expect(result.position >= 0 && result.position <= source.length).toBe(true);
        expect(runCalculator({ expression: source }).code).toBe(result.ok ? 'ok' : 'error');
      }),
    );
  });
});
