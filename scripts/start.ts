/**
 * `npm start`: the whole thing on this machine, on the embedded defaults. Installs the
 * Temporal binaries if needed, starts the dev server (unless TEMPORAL_ADDRESS answers),
 * the scripted LLM (unless a provider key is set), the gateway with its chat page (a
 * fresh demo key in .data/demo-gateway-keys.json) and a worker, then runs a demo session
 * that shows a retry and a tool call, and keeps the UI and the page up until Ctrl-C.
 * `npm start -- --once` exits 0 when the demo session finished.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Client } from '@temporalio/client';
import { parseClientEnv, type ClientEnv } from '../client/config';
import { bold, dim, formatConversation, green, red } from '../client/output';
import { connectClient, runOnce, uiLink } from '../client/sessions';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { connectClientConnection } from '../connection/connect-client';
import type { TemporalConnectionConfig } from '../connection/connection-config';
import { DEFAULT_DB_FILE, startDevServer, type DevServer } from '../harness/dev-server';
import { PROJECT_ROOT } from '../harness/temporal-binaries';
import { spawnWorker, type WorkerProcess } from '../harness/worker-process';
import { flushClientTracing } from '../tracing/tracing-client';
import { parseLiveStreamEnv } from '../config/live-stream';
import { parseGatewayEnv } from '../gateway/config';
import { addKeyToFile, newGatewayKey, readKeysFile } from '../gateway/keys';
import { serveGateway } from '../gateway/serve';
import { createLiveStreamSubscriber } from '../streaming/index';

const DEMO_MODEL = 'scripted-demo';
const DEMO_PROMPT = 'What is (17 + 25) * 2? Use the calculator.';

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { once: { type: 'boolean', default: false } } });
  const env = parseClientEnv(process.env);
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };
  process.once('SIGINT', () => void stopAll().then(() => process.exit(0)));
  process.once('SIGTERM', () => void stopAll().then(() => process.exit(0)));

  try {
    const server = await ensureTemporal(env.connection, env.TEMPORAL_UI_URL);
    if (server) stops.push(() => server.stop());

    const hasKey = Boolean(process.env.ANTHROPIC_API_KEY || process.env.OPENAI_API_KEY || process.env.GEMINI_API_KEY);
    let llm: ScriptedLlm | undefined;
    if (!hasKey) {
      llm = await startScriptedLlm();
      stops.push(() => llm?.close() ?? Promise.resolve());
      scriptDemo(llm);
      step(`scripted LLM on ${llm.url} (no provider key set)`);
    }

    const client = await connectClient(env);
    // Stops run last-pushed first: the connection closes, then the client's spans are exported.
    stops.push(flushClientTracing);
    stops.push(() => client.connection.close());
    // Before the worker: the embedded live stream's socket is the gateway's, and the worker connects to it.
    const page = await startGateway(client, env);
    stops.push(page.close);

    const worker = await startWorker(env.connection.address, llm);
    stops.push(() => worker.kill('SIGTERM'));

    const model = llm ? `anthropic:${DEMO_MODEL}` : env.AGENT_MODEL;
    step(`demo session on ${model}: ${JSON.stringify(DEMO_PROMPT)}`);
    const result = await runOnce(client, env, { model, prompt: DEMO_PROMPT, onProgress: (line) => console.log(dim(`  … ${line}`)) });

    console.log(`\n${formatConversation(result.messages)}\n`);
    if (llm) {
      const requests = llm.requests({ model: DEMO_MODEL });
      const first = requests[0]?.at ?? 0;
      console.log(bold('what the LLM server saw'));
      for (const r of requests) console.log(dim(`  +${((r.at - first) / 1000).toFixed(1)} s  ${r.method} ${r.path.split('?')[0]}  → ${r.replyKind}`));
    }
    const status = result.status === 'completed' ? green(result.status) : red(`${result.status}: ${result.failure?.type} ${result.failure?.message}`);
    console.log(`\n${bold('turn')} ${status}`);
    console.log(`${bold('Temporal UI')} ${uiLink(env, result.workflowId, result.runId)}`);
    // The key in the fragment, which no browser sends to a server; the page keeps it in the tab and drops it from the address bar.
    console.log(`${bold('chat page')} ${page.url}/#key=${page.secret}&session=${encodeURIComponent(result.workflowId)}`);
    if (values.once) {
      await stopAll();
      return result.status === 'completed' ? 0 : 1;
    }
    console.log(dim('\nThe UI and the chat page stay up; Ctrl-C stops the gateway, the worker, the LLM server and the dev server.'));
    await new Promise(() => undefined);
    return 0;
  } catch (error) {
    await stopAll();
    throw error;
  }
}

function step(text: string): void {
  console.log(`${green('●')} ${text}`);
}

/**
 * The dev server, unless the configured Temporal answers. A secured one (TLS, an API key)
 * is never replaced by a local dev server: if it does not answer, that is the error.
 */
async function ensureTemporal(temporal: TemporalConnectionConfig, uiUrl: string): Promise<DevServer | undefined> {
  const { address } = temporal;
  const secured = temporal.security !== 'plaintext' || temporal.usesApiKey;
  const existing = await connectClientConnection(temporal, 1_000).catch((error: unknown) => {
    if (secured) throw error;
    return undefined;
  });
  if (existing) {
    await existing.close();
    step(`Temporal at ${address} answers; using it`);
    return undefined;
  }
  const [host, port] = address.split(':');
  const uiPort = Number(new URL(uiUrl).port || 80);
  const dbFile = process.env.TEMPORAL_DEV_DB ?? DEFAULT_DB_FILE;
  step(`starting the Temporal dev server on ${address} (history in ${path.relative(PROJECT_ROOT, dbFile)})`);
  const server = await startDevServer({
    ip: host === 'localhost' ? 'localhost' : (host ?? 'localhost'),
    port: Number(port),
    uiPort,
    dbFile,
    output: { file: path.join(PROJECT_ROOT, '.data', 'temporal-server.log') },
  });
  step(`Temporal UI on ${server.uiUrl}`);
  return server;
}

/**
 * The gateway in this process, as `npm run gateway` configures it (AGENT_GATEWAY_*,
 * AGENT_LIVE_STREAM*), with a keys file of the demo's own: one key, made again on every
 * start (its secret is printed, never stored), that may start any session and approve.
 */
async function startGateway(client: Client, env: ClientEnv): Promise<{ url: string; secret: string; close(): Promise<void> }> {
  const keysFile = path.join(PROJECT_ROOT, '.data', 'demo-gateway-keys.json');
  await mkdir(path.dirname(keysFile), { recursive: true });
  await rm(keysFile, { force: true });
  const { secret, entry } = newGatewayKey({ id: 'demo', agents: '*', approve: true });
  addKeyToFile(keysFile, entry);
  const gatewayEnv = parseGatewayEnv({ ...process.env, AGENT_GATEWAY_KEYS_FILE: keysFile });
  const subscriber = await createLiveStreamSubscriber(parseLiveStreamEnv(process.env, { namespace: env.connection.namespace, taskQueue: env.AGENT_TASK_QUEUE }));
  const logFile = path.join(PROJECT_ROOT, '.data', 'gateway.log');
  const log = createWriteStream(logFile, { flags: 'a' });
  const served = await serveGateway({
    client,
    env,
    keys: readKeysFile(keysFile),
    subscriber,
    corsOrigins: gatewayEnv.AGENT_GATEWAY_CORS_ORIGINS,
    port: gatewayEnv.AGENT_GATEWAY_PORT,
    host: gatewayEnv.AGENT_GATEWAY_HOST,
    log: (line) => log.write(`${line}\n`),
  }).catch(async (error: unknown) => {
    await subscriber.close();
    throw error;
  });
  step(`gateway and chat page on ${served.url} (log in ${path.relative(PROJECT_ROOT, logFile)})`);
  return {
    url: served.url,
    secret,
    async close() {
      await served.close();
      await subscriber.close();
      log.end();
    },
  };
}

async function startWorker(address: string, llm: ScriptedLlm | undefined): Promise<WorkerProcess> {
  const logFile = path.join(PROJECT_ROOT, '.data', 'worker.log');
  step(`starting the worker (log in ${path.relative(PROJECT_ROOT, logFile)})`);
  const worker = await spawnWorker({
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: address,
      // A server of our own, or one the developer runs for this: the worker may set it up.
      AGENT_REGISTER_SEARCH_ATTRIBUTES: 'true',
      ...(llm ? { ANTHROPIC_BASE_URL: llm.url, OPENAI_BASE_URL: llm.url, GEMINI_BASE_URL: llm.url } : {}),
    },
    logFile,
  });
  await worker.ready;
  return worker;
}

/** One overloaded reply with a stated wait (so the retry is visible), a tool call, then the answer. */
function scriptDemo(llm: ScriptedLlm): void {
  llm.script(
    DEMO_MODEL,
    { kind: 'status', status: 529, headers: { 'retry-after': '2' } },
    { kind: 'tool_calls', text: 'Let me compute that.', calls: [{ name: 'calculator', input: { expression: '(17 + 25) * 2' } }] },
    { kind: 'text', text: '(17 + 25) × 2 = 84.' },
  );
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`start: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
