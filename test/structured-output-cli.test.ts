import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import type { z } from 'zod';
import { parseClientEnv, type ClientEnv } from '../client/config';
import { formatEvent } from '../client/output';
import { readLog, sendAndWait, startSession } from '../client/sessions';
import { watchSession, type WatchItem } from '../client/watch';
import type { AgentDefinition } from '../contracts/agents/agent-definition';
import { PROJECT_ROOT } from '../harness/temporal-binaries';
import { clientEnvOf, useAgentHarness } from './support/agent-harness';
import { runEntry } from './support/cli';
import { blocksRunBy, DocLines } from './support/doc-blocks';

/**
 * Structured output from the client's side, against a real worker and the scripted LLM:
 * docs/structured-output.md's agent and its commands as written there, the value in each
 * result, the notes said at session start, and `watch` showing the JSON as it streams.
 */

interface DocExample {
  OrderStatus: z.ZodType;
  orderDesk: AgentDefinition;
  orderStatus(client: Client, env: ClientEnv, orderId: string): Promise<unknown>;
}

/** The example of docs/structured-output.md, as written there, its package imports pointed at this tree. */
const doc = await importDocExample();

async function importDocExample(): Promise<DocExample> {
  const text = await readFile(path.join(PROJECT_ROOT, 'docs', 'structured-output.md'), 'utf8');
  const block = /## An agent whose answer is a zod schema\n[^]*?```ts\n([^]*?)```/.exec(text)?.[1];
  if (!block) throw new Error('docs/structured-output.md has no ts block under "## An agent whose answer is a zod schema"');
  const pointed = block
    .replace("from 'durable-agent-worker/client'", `from ${JSON.stringify(path.join(PROJECT_ROOT, 'client', 'index.ts'))}`)
    .replace("from 'durable-agent-worker'", `from ${JSON.stringify(path.join(PROJECT_ROOT, 'index.ts'))}`);
  // Inside the project, so the example's own imports (zod, @temporalio/client) resolve from its node_modules.
  await mkdir(path.join(PROJECT_ROOT, '.data'), { recursive: true });
  const dir = await mkdtemp(path.join(PROJECT_ROOT, '.data', 'structured-output-doc-'));
  const file = path.join(dir, 'order-desk.ts');
  await writeFile(file, pointed);
  try {
    return (await import(file)) as DocExample;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const h = useAgentHarness({ agents: [doc.orderDesk] });
const env = () => clientEnvOf(h());
const cli = (...args: string[]) => runEntry('client/main.ts', args, env());

/** The doc's agent and commands run on this model: the scripted LLM answers it. */
const DOC_MODEL = 'gpt-4o-mini';
const SHIPPED = { orderId: '7', status: 'shipped' };
const FILE_SCHEMA = JSON.parse(await readFile(path.join(PROJECT_ROOT, 'docs', 'order-status.schema.json'), 'utf8')) as Record<string, unknown>;
const OPTIONAL_ETA_NOTE = 'openai strict mode needs every property in "required" (optional: /properties/eta): sent non-strict, the workflow still validates';

describe("docs/structured-output.md's agent", () => {
  it('answers its zod schema, sent natively, and sendAndWait given the agent returns the value', async () => {
    h().llm.script(DOC_MODEL, { kind: 'json', value: SHIPPED });
    const before = h().llm.requests({ model: DOC_MODEL }).length;
    await expect(doc.orderStatus(h().client, parseClientEnv(env()), '7')).resolves.toEqual(SHIPPED);
    const [request] = h().llm.requests({ model: DOC_MODEL }).slice(before);
    expect(request?.output).toEqual({ mode: 'json_schema', schema: doc.orderDesk.settings.outputSchema, strict: false });
  });
});

describe('the CLI, as docs/structured-output.md runs it', () => {
  /** A documented `npm run client -- …` line, run as the client's command with `<id>` made this id. */
  const documented = (pattern: RegExp, id = '') => {
    const { argv } = lines.take(pattern);
    expect(argv.slice(0, 4)).toEqual(['npm', 'run', 'client', '--']);
    return cli(...argv.slice(4).map((word) => (word === '<id>' ? id : word)));
  };
  let lines: DocLines;
  beforeAll(async () => {
    lines = new DocLines(await blocksRunBy('test/structured-output-cli.test.ts'));
  });
  afterAll(() => {
    expect(lines.untaken()).toEqual([]);
  });

  it("run --output-schema says the provider's strict-mode note at start and prints the value as indented JSON", async () => {
    h().llm.script(DOC_MODEL, { kind: 'json', value: SHIPPED });
    const result = await documented(/--output-schema \S+ --prompt "Where is order 7\?"$/);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr.split('\n')).toContain(OPTIONAL_ETA_NOTE);
    expect(result.stdout).toContain(`output\n${JSON.stringify(SHIPPED, null, 2)}\n`);
  });

  it('run --json puts the value in output', async () => {
    h().llm.script(DOC_MODEL, { kind: 'json', value: SHIPPED });
    const result = await documented(/--prompt "Where is order 7\?" --json$/);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'completed', reason: 'answered', output: SHIPPED });
  });

  it("start --agent says the agent's schema's note; send --output-schema gives its turn the file's schema, and --json its value", async () => {
    const started = await documented(/-- start --agent order_desk --json$/);
    expect(started.code, started.stderr).toBe(0);
    expect(started.stderr.split('\n')).toContain(OPTIONAL_ETA_NOTE);
    const { workflowId } = JSON.parse(started.stdout) as { workflowId: string };
    const late = { orderId: '7', status: 'open', eta: '2026-12-24' };
    h().llm.script(DOC_MODEL, { kind: 'json', value: late });
    const before = h().llm.requests({ model: DOC_MODEL }).length;
    const sent = await documented(/-- send <id> .* --output-schema \S+ --wait --json$/, workflowId);
    expect(sent.code, sent.stderr).toBe(0);
    expect(JSON.parse(sent.stdout)).toMatchObject({ workflowId, status: 'completed', output: late });
    // The message's schema, as the file has it, in place of the agent's.
    const [request] = h().llm.requests({ model: DOC_MODEL }).slice(before);
    expect(request?.output?.schema).toEqual(FILE_SCHEMA);
    await h().client.workflow.getHandle(workflowId).terminate('test cleanup');
  });
});

describe('watch, under an output schema', () => {
  it("shows the JSON as it streams (Anthropic's final_answer input), and the value on the turn's last line", async () => {
    const model = `structured-watch-${Date.now()}`;
    const value = { orderId: '7', status: 'shipped', eta: '2026-12-24' };
    // About six seconds of streaming: long enough for a few heartbeats (the worker sends one every 2 s at most).
    h().llm.script(model, { kind: 'json', value, chunkSize: 4, chunkDelayMs: 400 });
    const session = await startSession(h().client, h().env, { model: `anthropic:${model}`, outputSchema: FILE_SCHEMA, idleTimeoutMs: 120_000 });
    const items: WatchItem[] = [];
    const turn = sendAndWait(session, 'Where is order 7?');
    await watchSession(h().client, session, { until: turn, fromSeq: 0, intervalMs: 200, onItem: (item) => items.push(item) });
    expect(await turn).toMatchObject({ status: 'completed', output: value });
    const streamed = items.flatMap((item) => (item.type === 'progress' ? item.lines : [])).flatMap((line) => /streaming \(\d+ chars\) …(.+)$/.exec(line)?.[1] ?? []);
    expect(streamed.length).toBeGreaterThan(0);
    // Each tail is a piece of the answer's JSON as it grew, never the tool call around it.
    for (const tail of streamed) expect(JSON.stringify(value)).toContain(tail);
    const end = (await readLog(session)).find((e) => e.type === 'turn/end');
    expect(end && formatEvent(end)).toBe(`turn 1 completed, output:\n${JSON.stringify(value, null, 2)}`);
    await session.terminate('test cleanup');
  });
});
