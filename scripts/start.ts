/**
 * `npm start`: the whole thing on this machine, on the embedded defaults. Installs the
 * Temporal binaries if needed, starts the dev server (unless TEMPORAL_ADDRESS answers),
 * the scripted LLM (unless a provider key is set) and a worker, then runs a demo session
 * that shows a retry and a tool call, and keeps the UI up until Ctrl-C.
 * `npm start -- --once` exits 0 when the demo session finished.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parseClientEnv } from '../client/config';
import { bold, dim, formatConversation, green, red } from '../client/output';
import { connectClient, runOnce, uiLink } from '../client/sessions';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { connectClientConnection } from '../connection/connect-client';
import type { TemporalConnectionConfig } from '../connection/connection-config';
import { DEFAULT_DB_FILE, startDevServer, type DevServer } from '../harness/dev-server';
import { PROJECT_ROOT } from '../harness/temporal-binaries';
import { spawnWorker, type WorkerProcess } from '../harness/worker-process';
import { flushClientTracing } from '../tracing/tracing-client';

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

    const worker = await startWorker(env.connection.address, llm);
    stops.push(() => worker.kill('SIGTERM'));

    const model = llm ? `anthropic:${DEMO_MODEL}` : env.AGENT_MODEL;
    step(`demo session on ${model}: ${JSON.stringify(DEMO_PROMPT)}`);
    const client = await connectClient(env);
    // Stops run last-pushed first: the connection closes, then the client's spans are exported.
    stops.push(flushClientTracing);
    stops.push(() => client.connection.close());
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
    if (values.once) {
      await stopAll();
      return result.status === 'completed' ? 0 : 1;
    }
    console.log(dim('\nThe UI stays up; Ctrl-C stops the worker, the LLM server and the dev server.'));
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
