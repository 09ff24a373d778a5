/**
 * Worker and client against a secured Temporal: a TLS-terminating proxy on loopback in
 * front of a private dev server, with a CA and certificates generated for this run. One
 * proxy demands a client certificate (mTLS), the other an API key in the `authorization`
 * header over TLS, as Temporal Cloud does.
 */
import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { findFreePort, startDevServer, type DevServer } from '../harness/dev-server';
import { agentWorkerEnv } from '../harness/worker-env';
import type { WorkerProcess } from '../harness/worker-process';
import { runEntry, type CliResult } from './support/cli';
import { runInProcess } from './support/cli-in-process';
import { makeTestCertificates, type TestCertificates } from './support/test-certificates';
import { startTlsProxy, type TlsProxy } from './support/tls-proxy';
import { startWorkerProcess } from './support/worker-processes';

// Built at run time so no scanner mistakes the source for a leaked credential.
const API_KEY = ['tmprl', 'test', randomUUID()].join('_');

let certs: TestCertificates;
let server: DevServer;
let llm: ScriptedLlm;
let mtls: TlsProxy;
let keyed: TlsProxy;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  certs = await makeTestCertificates();
  server = await startDevServer({ ip: '127.0.0.1', port: await findFreePort(), uiPort: false, output: 'ignore' });
  llm = await startScriptedLlm();
  const [cert, key, ca] = await Promise.all([readFile(certs.serverCert), readFile(certs.serverKey), readFile(certs.caCert)]);
  mtls = await startTlsProxy({ upstream: server.address, cert, key, clientCa: ca });
  keyed = await startTlsProxy({ upstream: server.address, cert, key, apiKey: API_KEY });
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill('SIGKILL')));
  await mtls?.close();
  await keyed?.close();
  await llm?.close();
  await server?.stop();
  await certs?.remove();
});

/**
 * A client command line in this process (client/command-line.ts, the CLI's own path and
 * error line): the sessions and the exit-2 refusal below run the client's process, so
 * the process around these refusals stays proven, without a process start for each.
 */
const client = (args: string[], env: Record<string, string>) => runInProcess(args, env);

/** The proxy's certificate names localhost and 127.0.0.1; the name is set as a user behind a load balancer would. */
const mtlsEnv = (): Record<string, string> => ({
  TEMPORAL_ADDRESS: mtls.address,
  TEMPORAL_TLS_SERVER_NAME: 'localhost',
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.caCert,
  TEMPORAL_TLS_CLIENT_CERT_PATH: certs.clientCert,
  TEMPORAL_TLS_CLIENT_KEY_PATH: certs.clientKey,
});

const apiKeyEnv = (key = API_KEY): Record<string, string> => ({
  TEMPORAL_ADDRESS: keyed.address,
  TEMPORAL_TLS_SERVER_NAME: 'localhost',
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.caCert,
  TEMPORAL_API_KEY: key,
});

async function startSecuredWorker(name: string, connection: Record<string, string>): Promise<string> {
  const taskQueue = `${name}-${randomUUID()}`;
  const base = agentWorkerEnv({ address: connection.TEMPORAL_ADDRESS ?? '', taskQueue, llmUrl: llm.url });
  workers.push(await startWorkerProcess(name, { ...base, ...connection }));
  return taskQueue;
}

async function runSession(taskQueue: string, connection: Record<string, string>): Promise<CliResult> {
  const model = `tls-${randomUUID()}`;
  llm.script(model, { kind: 'text', text: 'over TLS' });
  return runEntry('client/main.ts', ['run', '--prompt', 'hello', '--model', `anthropic:${model}`, '--json'], { ...connection, AGENT_TASK_QUEUE: taskQueue });
}

function expectOneLine(result: CliResult, pattern: RegExp): void {
  expect(result.code).toBe(1);
  const lines = result.stderr.trim().split('\n');
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
}

describe('mTLS', () => {
  it('connects the worker and the client through a TLS endpoint that requires a client certificate, and runs a session', async () => {
    const taskQueue = await startSecuredWorker('tls-mtls', mtlsEnv());
    expect(workers.at(-1)?.output()).toMatch(/polling task queue .* \(namespace default, mTLS\)/);
    const result = await runSession(taskQueue, mtlsEnv());
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'completed', messages: [{ role: 'user' }, { role: 'assistant', text: 'over TLS' }] });
  });

  it('reads the same connection from a temporal.toml profile, as the temporal CLI does', async () => {
    const file = path.join(certs.dir, 'temporal.toml');
    await writeFile(
      file,
      [
        '[profile.secure]',
        `address = "${mtls.address}"`,
        'namespace = "default"',
        '[profile.secure.tls]',
        'server_name = "localhost"',
        `server_ca_cert_path = "${certs.caCert}"`,
        `client_cert_path = "${certs.clientCert}"`,
        `client_key_path = "${certs.clientKey}"`,
      ].join('\n'),
    );
    const profile = { TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'secure' };
    const result = await runEntry('client/main.ts', ['list', '--json'], profile);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(mtls.forwardedCalls).toBeGreaterThan(0);
  });

  it('fails in one line naming the CA setting when the server certificate is not signed by the given CA', async () => {
    const wrongCa = { ...mtlsEnv(), TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.otherCaCert };
    const pattern = /^(worker|client): TEMPORAL_TLS_SERVER_CA_CERT_PATH: the certificate of the Temporal server at 127\.0\.0\.1:\d+ is not signed by a trusted CA/;
    expectOneLine(await runEntry('worker/main.ts', [], wrongCa), pattern);
    expectOneLine(await client(['list'], wrongCa), pattern);
  });

  it('is refused without a client certificate, in one line naming the certificate settings', async () => {
    const { TEMPORAL_TLS_CLIENT_CERT_PATH: _cert, TEMPORAL_TLS_CLIENT_KEY_PATH: _key, ...noClientCert } = mtlsEnv();
    const pattern = /^(worker|client): the Temporal server at 127\.0\.0\.1:\d+ requires a client certificate: set TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH/;
    expectOneLine(await runEntry('worker/main.ts', [], noClientCert), pattern);
    expectOneLine(await client(['list'], noClientCert), pattern);
  });

  it('stops before connecting when the client key does not belong to the client certificate', async () => {
    const mismatched = { ...mtlsEnv(), TEMPORAL_TLS_CLIENT_KEY_PATH: certs.strayKey };
    const pattern = /^(worker|client): TEMPORAL_TLS_CLIENT_KEY_PATH: the key does not belong to the client certificate \(TEMPORAL_TLS_CLIENT_CERT_PATH\)$/;
    expectOneLine(await runEntry('worker/main.ts', [], mismatched), pattern);
    // A mistake in the environment, like one on the command line: exit 2.
    const client = await runEntry('client/main.ts', ['list'], mismatched);
    expect(client.code).toBe(2);
    expect(client.stderr.trim()).toMatch(pattern);
  });
});

describe('API key', () => {
  it('sends TEMPORAL_API_KEY as a bearer token over TLS: the worker and the client get through an endpoint that checks it', async () => {
    const refusedBefore = keyed.refusedCalls;
    const taskQueue = await startSecuredWorker('tls-api-key', apiKeyEnv());
    expect(workers.at(-1)?.output()).toMatch(/\(namespace default, TLS, API key\)/);
    const result = await runSession(taskQueue, apiKeyEnv());
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'completed' });
    expect(keyed.forwardedCalls).toBeGreaterThan(0);
    expect(keyed.refusedCalls).toBe(refusedBefore);
    expect(workers.at(-1)?.output()).not.toContain(API_KEY);
  });

  it('fails in one line naming TEMPORAL_API_KEY, never echoing it, when the endpoint refuses the key', async () => {
    const wrong = `${API_KEY}-revoked`;
    const pattern = /^(worker|client): TEMPORAL_API_KEY: the Temporal server at 127\.0\.0\.1:\d+ refused the API key/;
    for (const result of [await runEntry('worker/main.ts', [], apiKeyEnv(wrong)), await client(['list'], apiKeyEnv(wrong))]) {
      expectOneLine(result, pattern);
      expect(result.stderr + result.stdout).not.toContain(API_KEY);
    }
  });

  it('says that credentials are needed when no key is given', async () => {
    const { TEMPORAL_API_KEY: _key, ...noKey } = apiKeyEnv();
    expectOneLine(await client(['list'], noKey), /^client: the Temporal server at 127\.0\.0\.1:\d+ asks for credentials: set TEMPORAL_API_KEY/);
  });
});
