/**
 * AgentPlugin (docs/plugin.md) on a worker and a client of a user's own. The page's three
 * files (the user's workflows, worker and client) are written to a folder of their own,
 * their package imports pointed at this tree's sources, and run as the page says: the
 * worker as a process on the test run's Temporal server, with a workflow of the user's
 * own beside the session on one task queue, against the scripted model; the client as a
 * process that prints what the page says it prints. Payloads are encrypted throughout.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../config/config-error';
import { SESSION_WORKFLOW, sendUpdate, type TurnOutcome } from '../contracts/api';
import { ENCRYPTED_ENCODING } from '../encryption/aes-gcm-codec';
import { PROJECT_ROOT } from '../harness/temporal-binaries';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { AgentPlugin } from '../worker/agent-plugin';
import { devServerAddress, devServerNamespace, uniqueTaskQueue } from './temporal-env';

const LAUNCH = path.join(PROJECT_ROOT, 'bin', 'launch.js');
const KEY = { id: 'plugin-test', bytes: randomBytes(32) };
const MODEL = 'claude-sonnet-4-5';

const doc = await readFile(path.join(PROJECT_ROOT, 'docs', 'plugin.md'), 'utf8');
const fenced = (language: string) => [...doc.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map((match) => match[1] ?? '');

/** A block of the page by the file name on its first line, its package imports pointed at this tree. */
function pageFile(name: string): string {
  const block = fenced('ts').find((text) => text.startsWith(`// ${name}\n`));
  if (block === undefined) throw new Error(`docs/plugin.md has no ts block starting "// ${name}"`);
  return block
    .replaceAll("'durable-agent-worker/workflows'", JSON.stringify(path.join(PROJECT_ROOT, 'workflows', 'index.ts')))
    .replaceAll("'durable-agent-worker/worker'", JSON.stringify(path.join(PROJECT_ROOT, 'worker', 'index.ts')))
    .replaceAll("'./workflows.js'", "'./workflows.ts'");
}

describe('AgentPlugin on a worker and a client of the user’s own', () => {
  let llm: ScriptedLlm;
  let folder: string;
  let worker: ChildProcess;
  let workerOutput = '';
  let connection: Connection;
  let client: Client;
  const taskQueue = uniqueTaskQueue('plugin');
  const env = () => ({
    PATH: process.env.PATH,
    TEMPORAL_ADDRESS: devServerAddress(),
    AGENT_TASK_QUEUE: taskQueue,
    ANTHROPIC_BASE_URL: llm.url,
    ANTHROPIC_API_KEY: 'test-anthropic-key',
    AGENT_ENCRYPTION_KEY: KEY.bytes.toString('base64'),
    AGENT_ENCRYPTION_KEY_ID: KEY.id,
  });

  beforeAll(async () => {
    llm = await startScriptedLlm();
    // Inside the project, so the files' own imports (@temporalio/…) resolve from its node_modules.
    await mkdir(path.join(PROJECT_ROOT, '.data'), { recursive: true });
    folder = await mkdtemp(path.join(PROJECT_ROOT, '.data', 'plugin-doc-'));
    for (const name of ['workflows.ts', 'worker.ts', 'client.ts']) await writeFile(path.join(folder, name), pageFile(name));
    worker = spawn(process.execPath, [LAUNCH, path.join(folder, 'worker.ts')], { cwd: folder, env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
    worker.stdout?.on('data', (chunk: Buffer) => (workerOutput += chunk.toString()));
    worker.stderr?.on('data', (chunk: Buffer) => (workerOutput += chunk.toString()));
    connection = await Connection.connect({ address: devServerAddress() });
    client = new Client({ connection, namespace: devServerNamespace(), plugins: [new AgentPlugin({ encryption: KEY })] });
  }, 60_000);

  afterAll(async () => {
    worker?.kill('SIGKILL');
    await connection?.close();
    await llm?.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('runs the page’s client against its worker: a workflow of the user’s own reads an order with its own activity and awaits a child session’s answer', async () => {
    llm.script(MODEL, { kind: 'text', text: 'It shipped on Monday.' });
    const printed = await runToEnd(spawn(process.execPath, [LAUNCH, path.join(folder, 'client.ts')], { cwd: folder, env: env(), stdio: ['ignore', 'pipe', 'pipe'] }));
    expect(printed, workerOutput).toBe(fenced('text')[0]);
    // The user's activity ran on the worker and its result reached the model, through the session's input.
    expect(JSON.stringify(llm.requests({ model: MODEL }).at(-1)?.body)).toContain('A-1001: two books, shipped on Monday');
  }, 180_000);

  it('encrypts on the plugin’s client what the plugin’s worker decrypts: the server holds ciphertext only', async () => {
    llm.script(MODEL, { kind: 'text', text: 'On its way.' });
    const workflowId = `plugin-encrypted-${randomUUID()}`;
    const answer = await client.workflow.execute('answerCustomer', { taskQueue, workflowId, args: ['B-2002', 'Is it late?'] });
    expect(answer).toBe('On its way.');
    expect(JSON.stringify(llm.requests({ model: MODEL }).at(-1)?.body)).toContain('B-2002: two books');
    const started = (await client.workflow.getHandle(workflowId).fetchHistory()).events?.[0]?.workflowExecutionStartedEventAttributes;
    const input = started?.input?.payloads ?? [];
    expect(input.length).toBe(2);
    for (const payload of input) {
      expect(Buffer.from(payload.metadata?.encoding ?? []).toString()).toBe(ENCRYPTED_ENCODING);
      expect(Buffer.from(payload.data ?? []).toString()).not.toContain('B-2002');
    }
  }, 120_000);

  it('runs a session started by the client on the same task queue as the user’s workflows, and replays its history with one line', async () => {
    llm.script(MODEL, { kind: 'text', text: 'Hello from the session.' });
    const handle = await client.workflow.start(SESSION_WORKFLOW, { taskQueue, workflowId: `plugin-session-${randomUUID()}`, args: [{ model: `anthropic:${MODEL}` }] });
    const outcome: TurnOutcome = await handle.executeUpdate(sendUpdate, { args: [{ text: 'hello' }] });
    expect(outcome).toMatchObject({ turn: 1, status: 'completed' });
    await handle.terminate('replayed below');
    const history = await handle.fetchHistory();
    await expect(Worker.runReplayHistory({ plugins: [new AgentPlugin({ encryption: KEY })] }, history, handle.workflowId)).resolves.toBeUndefined();
  }, 120_000);
});

describe('AgentPlugin’s options', () => {
  it('refuses an activity of the user’s with the name of one of the agent’s, naming it', async () => {
    const create = Worker.create({ taskQueue: 'never-polled', activities: { callLlm: async () => 'mine' }, plugins: [new AgentPlugin()] });
    await expect(create).rejects.toThrow(new ConfigError('AgentPlugin: the worker\'s activities "callLlm" have the names of the agent\'s own; rename them'));
  });

  it.each([
    [{ providers: { openai: { baseUrl: 'ftp://models.example' } } }, 'AgentPlugin: providers.openai.baseUrl: must be an http(s) URL'],
    [{ providers: { anthropic: { apiKey: '' } } }, 'AgentPlugin: providers.anthropic.apiKey: must be a non-empty string'],
    [{ providers: { mistral: {} } }, 'AgentPlugin: "providers.mistral": not an option'],
    [{ httpAllowlist: ['api.example.com', 'bad host'] }, 'AgentPlugin: httpAllowlist[1]: invalid entry "bad host": not a hostname, *.domain, [IPv6] or *'],
    [{ workspace: '' }, 'AgentPlugin: workspace: must be a folder path'],
    [{ httpMaxResponseBytes: 2 * 1024 * 1024 }, 'AgentPlugin: httpMaxResponseBytes: must be at most 1048576 (1 MiB, the most a tool result carries)'],
    [{ llmIdleTimeoutMs: 1.5 }, 'AgentPlugin: llmIdleTimeoutMs: must be a whole number'],
    [{ logCacheMb: -1 }, 'AgentPlugin: logCacheMb: must not be negative'],
    [{ prices: { 'anthropic:x': { input: 1 } } }, 'AgentPlugin: prices.anthropic:x.output: must be a number of USD per million tokens'],
    [{ encryption: { id: 'k', bytes: Buffer.alloc(16) } }, 'AgentPlugin: encryption: must be an encryption key ({ id, bytes } of 32 bytes, as encryptionKeyFromEnv returns)'],
    [{ mcp: { docs: { command: 'x' } } }, 'AgentPlugin: mcp: must be the servers readWorkerFiles read (a Map of name to server)'],
    [{ retries: 3, workspace: 7 }, 'AgentPlugin: workspace: must be a folder path; "retries": not an option'],
  ])('refuses bad options in one line naming each: %j', (options, line) => {
    expect(() => new AgentPlugin(options as never)).toThrow(new ConfigError(line));
  });

  it('never repeats an API key it refuses', () => {
    expect(() => new AgentPlugin({ providers: { google: { apiKey: 'sk-secret', baseUrl: 'nope' }, nope: 'sk-secret' } } as never)).toThrow(/^(?!.*sk-secret)AgentPlugin: [^\n]+$/);
  });
});

/** What a process printed on stdout, once it exited 0; its whole output when it failed. */
async function runToEnd(child: ChildProcess): Promise<string> {
  let stdout = '';
  let all = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    all += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => (all += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`exited with ${code}: ${all}`);
  return stdout;
}
