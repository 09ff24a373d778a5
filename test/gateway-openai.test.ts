/**
 * The OpenAI-compatible endpoint with the official `openai` package as its client: a real
 * dev server, a real worker process serving agents (test/support/agents-worker.ts), the
 * scripted LLM as the model, and the gateway on a port of this process. What the SDK
 * parses (its typed errors, its stream accumulator, which refuses events out of order) is
 * what any OpenAI client gets.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalGateway, type LocalGateway } from '../harness/gateway';
import { agentWorkerEnv } from '../harness/worker-env';
import { spawnWorker, type WorkerProcess } from '../harness/worker-process';
import { PROJECT_ROOT } from '../harness/temporal-binaries';
import { createLiveStreamSubscriber } from '../streaming';
import type { DeltaFrame } from '../contracts/live-stream';
import type { SessionEvent } from '../contracts/session-log';
import { TurnResponse, type SequencedEvent } from '../gateway/openai/turn-response';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { workerLogFile } from './support/worker-processes';
import { devServerAddress, devServerNamespace, uniqueTaskQueue } from './temporal-env';

const MODEL = `gateway-openai-${Date.now()}`;

let llm: ScriptedLlm;
let worker: WorkerProcess;
let gw: LocalGateway;
let socketDir: string;

/** The SDK as a product would configure it, with one of the gateway's keys. */
const openai = (key = 'helper') => new OpenAI({ apiKey: gw.secrets[key] ?? key, baseURL: `${gw.url}/v1`, maxRetries: 0 });

describe('a turn as the Responses API streams it, from the feed', () => {
  const delta = (attempt: number, offset: number, text: string): DeltaFrame => ({ kind: 'delta', v: 1, sessionId: 's', turn: 1, step: 1, attempt, channel: 'text', offset, text });
  const answer = (text: string, toolCalls: { id: string; name: string; input: Record<string, unknown> }[] = []): SessionEvent => ({
    type: 'assistant',
    seq: 3,
    at: 0,
    turn: 1,
    step: 1,
    message: { role: 'assistant', text, toolCalls, stopReason: toolCalls.length > 0 ? 'tool_use' : 'end_turn', usage: { inputTokens: 1, outputTokens: 1 } },
  });
  const streamed = () => {
    const events: SequencedEvent[] = [];
    const response = new TurnResponse({ id: 'resp_x', model: 'helper', itemPrefix: 'x', previousResponseId: null, createdAt: 0 }, (e) => events.push(e));
    response.start();
    response.log({ type: 'step/start', seq: 2, at: 0, turn: 1, step: 1, model: 'anthropic:m' });
    const texts = () => events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : []));
    const done = () => events.flatMap((e) => (e.type === 'response.output_text.done' ? [e.text] : []));
    return { response, texts, done, types: () => events.map((e) => e.type), numbers: () => events.map((e) => e.sequence_number) };
  };
  const at = { seq: 4, at: 0, turn: 1, step: 1 };

  it("sends a step's text, its tool calls and the end in the Responses API's order, numbered from 0", () => {
    const { response, types, numbers } = streamed();
    response.delta(delta(1, 0, 'Let me add.'));
    response.log(answer('Let me add.', [{ id: 'c1', name: 'calculator', input: { expression: '1+1' } }]));
    response.log({ type: 'tool/call', ...at, callId: 'c1', name: 'calculator', input: { expression: '1+1' } });
    response.log({ type: 'tool/result', ...at, seq: 5, callId: 'c1', name: 'calculator', code: 'ok', content: '2' });
    expect(response.log({ type: 'turn/end', seq: 6, at: 0, turn: 1, status: 'completed', reason: 'answered' })).toBe(true);
    expect(types()).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.mcp_call.in_progress',
      'response.mcp_call.completed',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(numbers()).toEqual(types().map((_, i) => i));
  });

  it("holds a step's text that outran the log until the log starts the step, after the tool results before it", () => {
    const { response, types } = streamed();
    response.log(answer('', [{ id: 'c1', name: 'calculator', input: { expression: '1+1' } }]));
    response.log({ type: 'tool/call', ...at, callId: 'c1', name: 'calculator', input: { expression: '1+1' } });
    response.delta({ ...delta(1, 0, 'It is 2.'), step: 2 });
    response.log({ type: 'tool/result', ...at, seq: 5, callId: 'c1', name: 'calculator', code: 'ok', content: '2' });
    response.log({ type: 'step/start', seq: 6, at: 0, turn: 1, step: 2, model: 'anthropic:m' });
    expect(types().slice(-3)).toEqual(['response.output_item.added', 'response.content_part.added', 'response.output_text.delta']);
    expect(types().indexOf('response.mcp_call.completed')).toBeLessThan(types().indexOf('response.output_text.delta'));
  });

  it('sends a delta the moment it comes, before the log has the answer', () => {
    const { response, texts } = streamed();
    response.delta(delta(1, 0, 'Hi'));
    expect(texts()).toEqual(['Hi']);
  });

  it("sends a retried call's text, streamed again from offset 0, only beyond what was already sent", () => {
    const { response, texts } = streamed();
    response.delta(delta(1, 0, 'Hel'));
    response.delta(delta(2, 0, 'He'));
    response.delta(delta(2, 2, 'llo'));
    response.delta(delta(1, 3, 'p!'));
    response.log(answer('Hello'));
    expect(texts()).toEqual(['Hel', 'lo']);
  });

  it("after a switch to a fallback, adds none of the fallback's text to the failed call's: the done event and the response have the answer alone", () => {
    const { response, texts, done } = streamed();
    // The failed call's words, then a fallback's call of the same step, whose attempts count from 1 again.
    response.delta(delta(1, 0, 'The answer is 4'));
    response.log({ type: 'model/switched', seq: 3, at: 0, turn: 1, step: 1, from: 'anthropic:m', to: 'openai:n', why: 'fallback', failure: { type: 'network_error', message: 'the stream ended early' } });
    response.delta(delta(1, 0, 'It is 42, '));
    response.delta(delta(1, 10, 'as the calculator says.'));
    response.log({ ...answer('It is 42, as the calculator says.'), seq: 4 });
    expect(texts()).toEqual(['The answer is 4']);
    expect(done()).toEqual(['It is 42, as the calculator says.']);
    expect(response.snapshot().output).toMatchObject([{ type: 'message', status: 'completed', content: [{ text: 'It is 42, as the calculator says.' }] }]);
  });

  it("waits at a lost frame and completes the text from the log's answer", () => {
    const { response, texts } = streamed();
    response.delta(delta(1, 0, 'One, '));
    response.delta(delta(1, 10, 'three'));
    response.log(answer('One, two, three'));
    expect(texts()).toEqual(['One, ', 'two, three']);
  });
});

describe('over HTTP, with the openai package as the client', () => {
  beforeAll(async () => {
    llm = await startScriptedLlm();
    const taskQueue = uniqueTaskQueue('gateway-openai');
    // The embedded live stream, as `npm start` runs it: the gateway listens, the worker connects.
    socketDir = await mkdtemp(path.join(tmpdir(), 'gateway-openai-'));
    const socketPath = path.join(socketDir, 'live.sock');
    const subscriber = await createLiveStreamSubscriber({ mode: 'embedded', socketPath });
    const extra = { AGENTS_WORKER_MODEL: MODEL, AGENT_LIVE_STREAM: 'embedded', AGENT_LIVE_STREAM_SOCKET: socketPath };
    const env = agentWorkerEnv({ address: devServerAddress(), namespace: devServerNamespace(), taskQueue, llmUrl: llm.url, extra });
    worker = await spawnWorker({ env, logFile: workerLogFile('gateway-openai'), entry: path.join(import.meta.dirname, 'support', 'agents-worker.ts') });
    [gw] = await Promise.all([
      startLocalGateway({ address: devServerAddress(), namespace: devServerNamespace(), taskQueue, subscriber, keys: { helper: { agents: ['helper'] }, admin: { agents: '*', approve: true } } }),
      worker.ready,
    ]);
  }, 120_000);

  afterAll(async () => {
    await gw?.close();
    await worker?.kill();
    await llm?.close();
    if (socketDir) await rm(socketDir, { recursive: true, force: true });
  });

  describe('GET /v1/models', () => {
    it('lists the agents the key may start, each a model named by the agent', async () => {
      const page = await openai('helper').models.list();
      expect(page.data).toEqual([{ id: 'helper', object: 'model', created: 0, owned_by: 'durable-agent-worker' }]);
      expect((await openai('admin').models.list()).data.map((m) => m.id).sort()).toEqual(['helper', 'other']);
    });
  });

  describe('POST /v1/responses', () => {
    it("answers a turn as a Response: the agent's text as output_text, usage from the turn's spend", async () => {
      llm.script(MODEL, { kind: 'text', text: 'Hello from a durable agent.', usage: { inputTokens: 21, outputTokens: 7 } });
      const response = await openai().responses.create({ model: 'helper', input: 'Say hello.' });
      expect(response).toMatchObject({ object: 'response', status: 'completed', model: 'helper', error: null, previous_response_id: null });
      expect(response.output_text).toBe('Hello from a durable agent.');
      expect(response.output).toEqual([
        { type: 'message', id: expect.any(String), role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hello from a durable agent.', annotations: [] }] },
      ]);
      expect(response.usage).toEqual({ input_tokens: 21, input_tokens_details: { cached_tokens: 0 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 28 });
    });

    it("streams a turn in the API's order, numbered, its deltas adding up to the final text", async () => {
      const text = 'Streaming, piece by piece, from the log and the live stream.';
      llm.script(MODEL, { kind: 'text', text, chunkSize: 6 });
      const stream = await openai().responses.create({ model: 'helper', input: 'Stream something.', stream: true });
      const events = [];
      for await (const event of stream) events.push(event);

      const types = events.map((e) => e.type).filter((type, i, all) => type !== 'response.output_text.delta' || all[i - 1] !== type);
      expect(types).toEqual([
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ]);
      expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
      const deltas = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : []));
      expect(deltas.join('')).toBe(text);
      const [created, completed] = [events[0], events.at(-1)];
      if (created?.type !== 'response.created' || completed?.type !== 'response.completed') throw new Error('the stream did not begin with response.created and end with response.completed');
      expect(completed.response).toMatchObject({ id: created.response.id, status: 'completed', output: [{ type: 'message', content: [{ type: 'output_text', text }] }] });
    });

    it("streams the model's text live, while the provider is still sending it", async () => {
      const text = 'One, two, three, four, five, six, seven, eight.';
      // Eight frames 150 ms apart: the stream lasts about a second at the scripted LLM.
      llm.script(MODEL, { kind: 'text', text, chunkSize: 6, chunkDelayMs: 150 });
      const stream = await openai().responses.create({ model: 'helper', input: 'Count to eight.', stream: true });
      const deltas: string[] = [];
      let inFlightAtFirstDelta: boolean | undefined;
      for await (const event of stream) {
        if (event.type !== 'response.output_text.delta') continue;
        inFlightAtFirstDelta ??= llm.requests({ model: MODEL }).at(-1)?.endedAt === undefined;
        deltas.push(event.delta);
      }
      expect(inFlightAtFirstDelta).toBe(true);
      expect(deltas.length).toBeGreaterThan(1);
      expect(deltas.join('')).toBe(text);
    });

    it('continues the same session with previous_response_id: the second turn is sent the first', async () => {
      llm.script(MODEL, { kind: 'text', text: 'Noted: your name is Ada.' }, { kind: 'text', text: 'Your name is Ada.' });
      const client = openai();
      const first = await client.responses.create({ model: 'helper', input: 'My name is Ada.' });
      const second = await client.responses.create({ model: 'helper', input: [{ role: 'user', content: 'What is my name?' }], previous_response_id: first.id });
      expect(second).toMatchObject({ status: 'completed', output_text: 'Your name is Ada.', previous_response_id: first.id });
      expect(second.id).not.toBe(first.id);

      const [, request] = llm.requests({ model: MODEL }).slice(-2);
      const sent = JSON.stringify(request?.body);
      for (const said of ['My name is Ada.', 'Noted: your name is Ada.', 'What is my name?']) expect(sent).toContain(said);
    });

    it('reports each tool the agent ran as an mcp_call item, streamed in order before the answer', async () => {
      llm.script(MODEL, { kind: 'tool_calls', calls: [{ name: 'calculator', input: { expression: '6*7' } }] }, { kind: 'text', text: 'It is 42.' });
      const stream = openai().responses.stream({ model: 'helper', input: 'What is 6*7?' });
      const seen: string[] = [];
      stream.on('event', (event) => seen.push(event.type));
      const response = await stream.finalResponse();

      expect(response.output).toEqual([
        { type: 'mcp_call', id: expect.any(String), server_label: 'helper', name: 'calculator', arguments: '{"expression":"6*7"}', status: 'completed', output: '42', error: null },
        expect.objectContaining({ type: 'message', status: 'completed', content: [expect.objectContaining({ type: 'output_text', text: 'It is 42.' })] }),
      ]);
      expect(seen.indexOf('response.mcp_call.completed')).toBeLessThan(seen.indexOf('response.output_text.delta'));
    });

    it('answers a failed turn as status failed, naming its failure type in error', async () => {
      llm.script(MODEL, { kind: 'status', status: 400, message: 'this request is malformed' });
      const response = await openai().responses.create({ model: 'helper', input: 'Fail, please.' });
      expect(response.status).toBe('failed');
      // The provider's 400 is the catalogue's invalid_request (docs/failure-types.md).
      expect(response.error).toEqual({ code: 'invalid_request', message: expect.stringContaining('malformed') });
    });
  });

  describe('errors, as the SDK raises them', () => {
    it('is an AuthenticationError for a key the gateway does not know', async () => {
      await expect(openai('dagw_not-a-key').models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
      await expect(openai('dagw_not-a-key').responses.create({ model: 'helper', input: 'hi' })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    });

    it('is a NotFoundError for a model that names no agent, and a PermissionDeniedError for one the key may not start', async () => {
      await expect(openai('admin').responses.create({ model: 'no-such-agent', input: 'hi' })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      await expect(openai('helper').responses.create({ model: 'other', input: 'hi' })).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
    });

    it('is a BadRequestError naming the field for what the endpoint does not take', async () => {
      const refused = (body: Record<string, unknown>) => openai().responses.create({ model: 'helper', input: 'hi', ...body } as never);
      await expect(refused({ input: [{ role: 'system', content: 'be terse' }] })).rejects.toThrow(/input/);
      await expect(refused({ instructions: 'be terse' })).rejects.toThrow(/instructions/);
      await expect(refused({ previous_response_id: 'resp_forged' })).rejects.toThrow(/previous_response_id/);
      // The SDK's `param` names the field too.
      await expect(refused({ instructions: 'be terse' })).rejects.toMatchObject({ param: 'instructions' });
      await expect(refused({ previous_response_id: 'resp_forged' })).rejects.toMatchObject({ param: 'previous_response_id' });
      await expect(refused({ temperature: 0.2 })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    });
  });

  describe('docs/openai-compatible.md', () => {
    it('runs its example as written: a question, then a streamed follow-up in the same session', async () => {
      const doc = await readFile(path.join(PROJECT_ROOT, 'docs', 'openai-compatible.md'), 'utf8');
      const example = /## An example\n[^]*?```ts\n([^]*?)```/.exec(doc)?.[1];
      if (!example) throw new Error('docs/openai-compatible.md has no ts block under "## An example"');
      // Inside the project, so `openai` resolves as it does for a product that installed it.
      const file = path.join(PROJECT_ROOT, 'test-results', `openai-example-${Date.now()}.ts`);
      await writeFile(file, example);
      try {
        llm.script(MODEL, { kind: 'text', text: '6*7 is 42.' }, { kind: 'text', text: 'Doubled, 84.' });
        const { askTwice } = (await import(file)) as { askTwice: (url: string, key: string) => Promise<string[]> };
        expect(await askTwice(gw.url, gw.secrets.helper ?? '')).toEqual(['6*7 is 42.', 'Doubled, 84.']);
      } finally {
        await rm(file, { force: true });
      }
    });
  });
});
