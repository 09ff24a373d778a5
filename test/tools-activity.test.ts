import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ApplicationFailure, CancelledFailure, type Logger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { Agent } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createToolActivities, createToolRunner, type ToolActivitiesConfig } from '../activities/tools';
import { idempotencyKey } from '../contracts/tools/registry';
import type { RunToolRequest, ToolOutcome } from '../contracts/tools/tool-outcome';

let server: Server;
let port: number;
let workspace: string;
let requests: { method: string; url: string; headers: IncomingHttpHeaders }[] = [];
let held: { arrived: Promise<void>; closed: Promise<void> };
let release: { arrived: () => void; closed: () => void };
const dispatcher = new Agent();

beforeAll(async () => {
  workspace = await mkdtemp(path.join(tmpdir(), 'tools-activity-'));
  server = createServer((req, res) => {
    requests.push({ method: req.method!, url: req.url!, headers: req.headers });
    req.resume();
    if (req.url === '/hold') {
      res.on('close', () => release.closed());
      release.arrived();
      return;
    }
    res.writeHead(req.url === '/missing' ? 404 : 200, { 'content-type': 'text/plain' }).end(req.url === '/missing' ? 'gone' : 'fine');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await dispatcher.close();
  await rm(workspace, { recursive: true, force: true });
});

beforeEach(() => {
  requests = [];
  let arrived!: () => void;
  let closed!: () => void;
  held = { arrived: new Promise((r) => (arrived = r)), closed: new Promise((r) => (closed = r)) };
  release = { arrived, closed };
});

const config = (overrides: Partial<ToolActivitiesConfig> = {}): ToolActivitiesConfig => ({
  dispatcher,
  workspaceDir: workspace,
  httpAllowlist: [`127.0.0.1:${port}`],
  ...overrides,
});

const url = (p: string) => `http://127.0.0.1:${port}${p}`;
const request = (name: string, input: unknown, extra: Partial<RunToolRequest> = {}): RunToolRequest => ({ name, input, callId: 'toolu_1', ...extra });

/** The SDK logs every failed activity at WARN; these failures are the point of the tests. */
const silent: Logger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
const activityEnv = (info: ConstructorParameters<typeof MockActivityEnvironment>[0] = {}) => new MockActivityEnvironment(info, { logger: silent });

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ApplicationFailure)) throw new Error(`expected an ApplicationFailure, got ${String(error)}`);
  return error;
}

describe('runTool activity: results', () => {
  it('runs each built-in tool and returns its outcome', async () => {
    const { runTool } = createToolActivities(config());
    const env = activityEnv();
    expect(await env.run(runTool, request('calculator', { expression: '6 * 7' }))).toEqual({ code: 'ok', content: '42' });
    const key = idempotencyKey('session-1', 'toolu_1');
    expect(await env.run(runTool, request('write_file', { path: 'out/a.txt', content: 'hi' }, { idempotencyKey: key }))).toEqual({
      code: 'ok',
      content: 'Wrote 2 bytes to out/a.txt.',
    });
    expect(await env.run(runTool, request('read_file', { path: 'out/a.txt' }))).toEqual({ code: 'ok', content: 'hi' });
    expect(await env.run(runTool, request('http_request', { method: 'GET', url: url('/ok') }))).toMatchObject({ code: 'ok' });
  });

  it('returns tool-reported errors as results, not failures', async () => {
    const { runTool } = createToolActivities(config());
    const env = activityEnv();
    expect(await env.run(runTool, request('calculator', { expression: '1 / 0' }))).toMatchObject({ code: 'error' });
    expect(await env.run(runTool, request('read_file', { path: 'missing.txt' }))).toMatchObject({ code: 'error' });
    expect(await env.run(runTool, request('http_request', { method: 'GET', url: url('/missing') }))).toMatchObject({
      code: 'error',
      content: expect.stringContaining('HTTP 404 Not Found'),
    });
    expect(await env.run(runTool, request('http_request', { method: 'GET', url: 'http://example.com/' }))).toMatchObject({
      code: 'error',
      content: expect.stringContaining('Request blocked'),
    });
  });

  it('refuses a listed host name that resolves to loopback, so DNS cannot open the local network', async () => {
    const { runTool } = createToolActivities(config({ httpAllowlist: [`localhost:${port}`] }));
    const outcome = (await activityEnv().run(runTool, request('http_request', { method: 'GET', url: `http://localhost:${port}/ok` }))) as ToolOutcome;
    expect(outcome.code).toBe('error');
    expect(outcome.content).toContain('which is in the loopback range');
    expect(requests).toHaveLength(0);
  });

  it('validates the input again and answers invalid input with the same error result as the workflow', async () => {
    const { runTool } = createToolActivities(config());
    const outcome = await activityEnv().run(runTool, request('http_request', { method: 'GET', url: url('/ok'), body: 'sneaky' }));
    expect(outcome).toEqual({
      code: 'error',
      content: 'Tool call rejected: invalid arguments for "http_request":\n- body: a body is not allowed with GET or HEAD\nFix the arguments and call the tool again.',
    });
    expect(requests).toHaveLength(0);
  });

  it('sends the idempotency key it is given on a side-effecting request', async () => {
    const { runTool } = createToolActivities(config());
    const key = idempotencyKey('session-1', 'toolu_9');
    await activityEnv().run(runTool, request('http_request', { method: 'DELETE', url: url('/thing') }, { callId: 'toolu_9', idempotencyKey: key }));
    expect(requests).toHaveLength(1);
    expect(requests[0]!.headers['idempotency-key']).toBe(key);
  });
});

describe('runTool activity: failures only a bug can cause', () => {
  it('fails non-retryably with internal_error for a tool this worker lacks', async () => {
    const { runTool } = createToolActivities(config());
    const failure = await failureOf(activityEnv().run(runTool, request('teleport', {})));
    expect(failure).toMatchObject({ type: 'internal_error', nonRetryable: true });
    expect(failure.message).toContain('this worker has no tool named "teleport"');
  });

  it('fails non-retryably with internal_error for a side-effecting call without an idempotency key', async () => {
    const { runTool } = createToolActivities(config());
    const failure = await failureOf(activityEnv().run(runTool, request('http_request', { method: 'POST', url: url('/x') })));
    expect(failure).toMatchObject({ type: 'internal_error', nonRetryable: true });
    expect(failure.message).toContain('without an idempotency key');
    expect(requests).toHaveLength(0);
  });

  it('fails non-retryably with internal_error for a malformed request', async () => {
    const { runTool } = createToolActivities(config());
    const failure = await failureOf(activityEnv().run(runTool, { name: 'calculator', input: {} } as RunToolRequest));
    expect(failure).toMatchObject({ type: 'internal_error', nonRetryable: true });
  });
});

describe('runTool activity: heartbeats and cancellation', () => {
  it('heartbeats while a request is held open, so a lost worker is noticed', async () => {
    const { runTool } = createToolActivities(config());
    const env = activityEnv({ heartbeatTimeoutMs: 300 });
    let beats = 0;
    env.on('heartbeat', () => beats++);
    // Only the heartbeat timer is faked: the held request's socket and server keep real time.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const pending = env.run(runTool, request('http_request', { method: 'GET', url: url('/hold') }));
      await held.arrived;
      const before = beats;
      // A third of the heartbeat timeout apart: three beats in one timeout.
      vi.advanceTimersByTime(300);
      expect(beats - before).toBeGreaterThanOrEqual(3);
      env.cancel();
      await expect(pending).rejects.toBeInstanceOf(CancelledFailure);
    } finally {
      vi.useRealTimers();
    }
  });

  it('aborts a held-open request when the activity is cancelled', async () => {
    const { runTool } = createToolActivities(config());
    const env = activityEnv({ heartbeatTimeoutMs: 1_000 });
    const pending = env.run(runTool, request('http_request', { method: 'POST', url: url('/hold') }, { idempotencyKey: 'agent-x' }));
    await held.arrived;
    env.cancel();
    await expect(pending).rejects.toBeInstanceOf(CancelledFailure);
    await held.closed;
    expect(requests).toHaveLength(1);
  });

  it('does not heartbeat when the call has no heartbeat timeout', async () => {
    const { runTool } = createToolActivities(config());
    const env = activityEnv();
    let beats = 0;
    env.on('heartbeat', () => beats++);
    await env.run(runTool, request('calculator', { expression: '1 + 1' }));
    expect(beats).toBe(0);
  });
});

describe('tool configuration', () => {
  it('is usable without Temporal, for tests and scripts', async () => {
    const run = createToolRunner(config());
    expect(await run(request('calculator', { expression: '2 ^ 10' }), { signal: new AbortController().signal })).toEqual({ code: 'ok', content: '1024' });
  });

  it('creates a missing workspace and resolves a relative one from the cwd', async () => {
    const dir = path.join(workspace, 'fresh', 'ws');
    const run = createToolRunner(config({ workspaceDir: path.relative(process.cwd(), dir) }));
    await run(request('write_file', { path: 'x.txt', content: 'y' }, { idempotencyKey: 'k' }), { signal: new AbortController().signal });
    expect(await readFile(path.join(dir, 'x.txt'), 'utf8')).toBe('y');
  });

  it('defaults to an empty allowlist', async () => {
    const run = createToolRunner({ dispatcher, workspaceDir: workspace });
    const outcome = await run(request('http_request', { method: 'GET', url: url('/ok') }), { signal: new AbortController().signal });
    expect(outcome.content).toContain('AGENT_HTTP_ALLOWLIST is empty');
    expect(requests).toHaveLength(0);
  });

  it.each([
    [{ httpAllowlist: ['http://x'] }, 'AGENT_HTTP_ALLOWLIST: invalid entry "http://x"'],
    [{ workspaceDir: '' }, 'workspaceDir (AGENT_WORKSPACE): must not be empty'],
    [{ maxResponseBytes: 0 }, 'maxResponseBytes:'],
    [{ httpTimeoutMs: 60_000 }, 'httpTimeoutMs: must be at most 55000'],
    [{ dispatcher: {} as never }, 'dispatcher: must be an undici Dispatcher'],
  ] as [Partial<ToolActivitiesConfig>, string][])('rejects %j at startup with a message naming the setting', (overrides, message) => {
    expect(() => createToolRunner(config(overrides))).toThrow(message);
  });

  it('rejects a workspace that is a file', async () => {
    const file = path.join(workspace, 'plain-file');
    await writeFile(file, '');
    expect(() => createToolRunner(config({ workspaceDir: file }))).toThrow('workspaceDir (AGENT_WORKSPACE)');
  });
});
