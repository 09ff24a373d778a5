/**
 * Provider API keys live in the worker's environment and nowhere else. Sessions run on all
 * three providers with sentinel keys, including a 401 whose body echoes the key back (as
 * OpenAI's does) and a tool call; then every place a key could leak to is searched:
 * history, failures, memo, search attributes, the client's output, the worker's log, the
 * worker's spans and the dev server's SQLite file. The scripted LLM must have received
 * every key, so the test fails if the keys were simply never sent. The keys are shaped like
 * none of the key patterns the redactor knows (`sk-…`, `AIza…`), as an Azure, Groq or vLLM
 * key is not: only masking the configured values themselves keeps them out.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportHistory, readLog } from '../client/sessions';
import { startHttpTarget, type HttpTarget } from '../harness/http-target';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { findFreePort, startDevServer, type DevServer } from '../harness/dev-server';
import { PROJECT_ROOT } from '../harness/temporal-binaries';
import { agentWorkerEnv } from '../harness/worker-env';
import type { WorkerProcess } from '../harness/worker-process';
import type { SessionHandle } from '../client/sessions';
import { runEntry, type CliResult } from './support/cli';
import { eventually } from './support/eventually';
import { startOtlpEndpoint, type OtlpEndpoint } from './support/otlp-endpoint';
import { searchableText } from './support/searchable-text';
import { startWorkerProcess, workerLogFile } from './support/worker-processes';

/** Unique per run, so an old file or log cannot make the test pass or fail. */
const MARK = randomBytes(12).toString('hex');
/** An Azure OpenAI key (32 hex digits), a Groq key, the token a vLLM server was started with. */
const KEYS = {
  openai: `${MARK}${randomBytes(4).toString('hex')}`,
  anthropic: `gsk_${MARK}Anthropic`,
  google: `vllm.${MARK}~google/token`,
} as const;
const PROVIDERS = ['anthropic', 'openai', 'google'] as const;
/** What the search looks for: the shared unique core, so a partly masked or cut key is found too. */
const NEEDLE = MARK;
/** Prompt text the sessions send: found in the SQLite file, it proves the file holds session data in the clear. */
const PROMPT_MARK = `prompt-marker-${randomBytes(6).toString('hex')}`;

const DIR = path.join(PROJECT_ROOT, '.data', `secrets-${randomUUID()}`);
const DB_FILE = path.join(DIR, 'temporal.sqlite');

let server: DevServer | undefined;
let llm: ScriptedLlm;
let target: HttpTarget;
let worker: WorkerProcess | undefined;
let client: Client;
let otlp: OtlpEndpoint;
const taskQueue = `secrets-${randomUUID()}`;
const runs: { provider: string; kind: 'tool' | 'auth'; cli: CliResult; out: { workflowId: string; status: string; failure?: { type: string; message: string } } }[] = [];

beforeAll(async () => {
  const port = await findFreePort();
  server = await startDevServer({ ip: '127.0.0.1', port, uiPort: false, dbFile: DB_FILE, output: { file: path.join(PROJECT_ROOT, 'test-results', 'secrets-dev-server.log') } });
  llm = await startScriptedLlm();
  target = await startHttpTarget();
  otlp = await startOtlpEndpoint();
  worker = await startWorkerProcess(
    'secrets',
    agentWorkerEnv({
      address: server.address,
      taskQueue,
      llmUrl: llm.url,
      keys: { anthropic: KEYS.anthropic, openai: KEYS.openai, gemini: KEYS.google },
      allowlist: [target.host],
      extra: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '100' },
    }),
  );
  client = new Client({ connection: await Connection.connect({ address: server.address }) });

  const clientEnv = { TEMPORAL_ADDRESS: server.address, AGENT_TASK_QUEUE: taskQueue };
  await Promise.all(
    PROVIDERS.flatMap((provider) => {
      const toolModel = `secrets-tool-${provider}-${MARK.slice(-4)}`;
      const authModel = `secrets-auth-${provider}-${MARK.slice(-4)}`;
      llm.script(
        toolModel,
        {
          kind: 'tool_calls',
          calls: [
            { name: 'calculator', input: { expression: '6*7' } },
            { name: 'http_request', input: { method: 'POST', url: `${target.url}/orders`, body: '{}' } },
          ],
        },
        { kind: 'text', text: 'It is 42 and the order is placed.' },
      );
      // The provider's 401 quotes the key, as OpenAI's "Incorrect API key provided: sk-…" does.
      llm.script(authModel, { kind: 'status', status: 401, message: `Incorrect API key provided: ${KEYS[provider]}. You can find your API key at https://example.invalid.` });
      const run = async (kind: 'tool' | 'auth', model: string) => {
        const cli = await runEntry('client/main.ts', ['run', '--prompt', `${PROMPT_MARK} what is 6*7?`, '--model', `${provider}:${model}`, '--json'], clientEnv);
        if (cli.code !== 0) throw new Error(`client run failed (${cli.code}): ${cli.stderr}`);
        runs.push({ provider, kind, cli, out: JSON.parse(cli.stdout) });
      };
      return [run('tool', toolModel), run('auth', authModel)];
    }),
  );
}, 240_000);

afterAll(async () => {
  await worker?.kill('SIGKILL');
  await client?.connection.close();
  await server?.stop();
  await target?.close();
  await otlp?.close();
  await llm?.close();
  await rm(DIR, { recursive: true, force: true });
});

const handles = () => runs.map((r) => client.workflow.getHandle(r.out.workflowId) as SessionHandle);

describe('a provider API key is never written anywhere but the request to the provider', () => {
  it('reaches the scripted LLM in every request, in each provider\'s own header (so the searches below could fail)', () => {
    const seen = llm.requests();
    expect(seen).toHaveLength(9);
    for (const request of seen) {
      const header = { anthropic: request.headers['x-api-key'], openai: request.headers.authorization, google: request.headers['x-goog-api-key'] }[request.provider];
      expect(header).toContain(KEYS[request.provider]);
      // Never in the URL, where proxies and error messages would pick it up.
      expect(request.path).not.toContain(NEEDLE);
    }
  });

  it('ran the sessions it searches: a tool call that completed and a 401 that failed as auth_error, on each provider', () => {
    expect(runs.map((r) => [r.provider, r.kind, r.out.status, r.out.failure?.type]).sort()).toEqual(
      PROVIDERS.flatMap((p) => [
        [p, 'auth', 'failed', 'auth_error'],
        [p, 'tool', 'completed', undefined],
      ]).sort(),
    );
    expect(target.requests('/orders')).toHaveLength(3);
  });

  it('is not in the client\'s output, its JSON or its failures', () => {
    for (const { cli, out } of runs) {
      expect(cli.stdout + cli.stderr).not.toContain(NEEDLE);
      expect(JSON.stringify(out)).not.toContain(NEEDLE);
    }
    // The redaction is what kept it out: the echoed key's place is marked.
    const failure = runs.find((r) => r.provider === 'openai' && r.kind === 'auth')?.out.failure;
    expect(failure?.message).toContain('[redacted]');
  });

  it('is not in the history JSON, the log, the memo or the search attributes of any session', async () => {
    for (const handle of handles()) {
      // Payloads are base64 in history JSON: searched decoded, and the prompt found there proves it.
      const history = searchableText(JSON.parse(await exportHistory(client, handle.workflowId)));
      expect(history).toContain(PROMPT_MARK);
      expect(history).not.toContain(NEEDLE);
      expect(searchableText(await readLog(handle))).not.toContain(NEEDLE);
      const description = await handle.describe();
      expect(searchableText({ memo: description.memo, searchAttributes: description.typedSearchAttributes, raw: description.raw })).not.toContain(NEEDLE);
    }
  });

  it('is not in the target a tool called', () => {
    expect(target.requests()).toHaveLength(3);
    expect(searchableText(target.requests())).not.toContain(NEEDLE);
  });

  it('is not in the worker\'s spans, which record the 401s', async () => {
    // Three failed attempt spans: the ones whose status carries the provider's message.
    await eventually('the spans of the three failed LLM calls', () => (otlp.spans.filter((s) => s.statusCode === 2 && s.attributes['error.type'] === 'auth_error').length >= 3 ? true : undefined));
    expect(otlp.exports.join('\n')).toContain('[redacted]');
    expect(otlp.exports.join('\n')).not.toContain(NEEDLE);
  });

  it('is not in the worker\'s log', async () => {
    const log = await readFile(workerLogFile('secrets'), 'utf8');
    expect(log).toContain('worker: polling');
    // The 401s were logged, with the echoed key masked: the log is where a leak would be.
    expect(log.match(/→ 401 .*\[redacted\]/g)).toHaveLength(3);
    expect(log).not.toContain(NEEDLE);
  });

  it('is not in the dev server\'s SQLite file (read after the server stopped and flushed it), which does hold the prompts', async () => {
    await server?.stop();
    server = undefined;
    const files = (await readdir(DIR)).filter((f) => f.startsWith(path.basename(DB_FILE)));
    expect(files).toContain(path.basename(DB_FILE));
    const bytes = Buffer.concat(await Promise.all(files.map((f) => readFile(path.join(DIR, f)))));
    expect(bytes.includes(Buffer.from(PROMPT_MARK))).toBe(true);
    expect(bytes.includes(Buffer.from(NEEDLE))).toBe(false);
  });
});
