/**
 * `GET /v1/sessions/{id}/events` end to end: a real dev server, a real worker process
 * publishing on the embedded live stream, the scripted LLM streaming slowly, and the
 * gateway's feeds reading the log through a Temporal client whose reads are counted.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Client, Connection, type WorkflowClientInterceptor } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSessionLog, sendMessage, startSession } from '../client';
import type { SessionEvent } from '../contracts/session-log';
import { agentWorkerEnv } from '../harness/worker-env';
import type { WorkerProcess } from '../harness/worker-process';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { blocksRunBy, DocLines, promisePattern } from './support/doc-blocks';
import { eventually } from './support/eventually';
import { startEventsGateway, type EventsGateway } from './support/events-gateway';
import { openEventStream } from './support/event-stream';
import { devServerAddress, devServerNamespace } from './temporal-env';
import { startWorkerProcess } from './support/worker-processes';

const taskQueue = `gateway-events-${randomUUID()}`;
/** Every Query and describe the gateway's client makes: what a viewer costs Temporal. */
const reads: { call: string; workflowId: string; at: number }[] = [];
const counter: WorkflowClientInterceptor = {
  query: (input, next) => {
    reads.push({ call: `query ${input.queryType}`, workflowId: input.workflowExecution.workflowId, at: Date.now() });
    return next(input);
  },
  describe: (input, next) => {
    reads.push({ call: 'describe', workflowId: input.workflowExecution.workflowId, at: Date.now() });
    return next(input);
  },
};

let llm: ScriptedLlm;
let connection: Connection;
let client: Client;
let gateway: EventsGateway;
let worker: WorkerProcess;

beforeAll(async () => {
  llm = await startScriptedLlm();
  connection = await Connection.connect({ address: devServerAddress() });
  client = new Client({ connection, namespace: devServerNamespace(), interceptors: { workflow: [counter] } });
  gateway = await startEventsGateway({ client, liveStream: 'embedded', taskQueue });
  worker = await startWorkerProcess(
    'gateway-events',
    agentWorkerEnv({ address: devServerAddress(), namespace: devServerNamespace(), taskQueue, llmUrl: llm.url, extra: gateway.workerEnv }),
  );
}, 120_000);

afterAll(async () => {
  await worker?.kill('SIGKILL');
  await gateway?.close();
  await connection?.close();
  await llm?.close();
});

let models = 0;
const newModel = (name: string) => `events-${name}-${++models}-${randomUUID().slice(0, 8)}`;
const start = (model: string) => startSession(client, { AGENT_TASK_QUEUE: taskQueue }, { model: `anthropic:${model}`, idleTimeoutMs: 120_000 });
const seqsOf = (events: readonly SessionEvent[]) => events.map((e) => e.seq);

describe('the event stream of a session', () => {
  it("streams a turn's log events in order, each with its seq as the event id, the final text from the log", async () => {
    const model = newModel('turn');
    const text = 'The answer is 42, streamed in small pieces.';
    llm.script(model, { kind: 'text', text, chunkSize: 4, chunkDelayMs: 30 });
    const session = await start(model);
    const viewer = await openEventStream(gateway.url, session.workflowId);
    try {
      await (await sendMessage(session, 'what is 6*7?')).outcome;
      await viewer.waitForLog((e) => e.type === 'turn/end');
    } finally {
      viewer.close();
    }
    const log = await readSessionLog(client.workflow, session.workflowId);
    expect(viewer.logEvents()).toEqual(log);
    expect(viewer.messages().filter((m) => m.event === 'log').map((m) => m.id)).toEqual(log.map((e) => String(e.seq)));
    // Only log events carry an id: the id a browser would resume from stays the last log event's.
    let lastLogId: string | undefined;
    for (const m of viewer.messages()) {
      if (m.event === 'log') lastLogId = JSON.stringify((JSON.parse(m.data) as SessionEvent).seq);
      expect(m.id).toBe(lastLogId);
    }
    const answer = log.find((e) => e.type === 'assistant');
    expect(answer?.type === 'assistant' && answer.message.text).toBe(text);
    await session.terminate('test cleanup');
  });

  it("sends the model's text as deltas of the turn in progress before the log's assistant event", async () => {
    const model = newModel('deltas');
    const text = 'Forty-two, sent four characters at a time so a viewer sees it grow.';
    llm.script(model, { kind: 'text', text, chunkSize: 4, chunkDelayMs: 20 });
    const session = await start(model);
    const viewer = await openEventStream(gateway.url, session.workflowId);
    try {
      await (await sendMessage(session, 'go')).outcome;
      await viewer.waitForLog((e) => e.type === 'turn/end');
    } finally {
      viewer.close();
    }
    const messages = viewer.messages();
    const deltas = messages.filter((m) => m.event === 'delta').map((m) => JSON.parse(m.data) as { turn: number; step: number; attempt: number; channel: string; offset: number; text: string });
    const assistantAt = messages.findIndex((m) => m.event === 'log' && (JSON.parse(m.data) as SessionEvent).type === 'assistant');
    expect(deltas.length).toBeGreaterThan(1);
    expect(messages.findIndex((m) => m.event === 'delta')).toBeLessThan(assistantAt);
    // Each delta continues the text where the one before it ended, and together they are the answer.
    let streamed = '';
    for (const d of deltas) {
      expect(d).toMatchObject({ turn: 1, step: 1, attempt: 1, channel: 'text', offset: streamed.length });
      streamed += d.text;
    }
    expect(streamed).toBe(text);
    const answer = viewer.logEvents().find((e) => e.type === 'assistant');
    expect(answer?.type === 'assistant' && answer.message.text).toBe(text);
    await session.terminate('test cleanup');
  });

  it('gives a viewer that reconnects with Last-Event-ID every event it missed, once: no gap, no duplicate', async () => {
    const model = newModel('reconnect');
    llm.script(model, { kind: 'tool_calls', calls: [{ id: 'toolu_events_1', name: 'calculator', input: { expression: '6*7' } }] }, { kind: 'text', text: 'It is 42.', hold: true });
    const session = await start(model);
    const first = await openEventStream(gateway.url, session.workflowId);
    const sent = await sendMessage(session, 'what is 6*7?');
    await first.waitForLog((e) => e.type === 'tool/result');
    first.close();
    // The follower goes with its last viewer.
    await eventually('the follower to close', () => (gateway.feeds.following === 0 ? true : undefined));
    // The rest of the turn happens while nobody watches.
    await eventually('the held answer to be released', () => (llm.release(model) > 0 ? true : undefined));
    await sent.outcome;
    const lastSeen = first.logEvents().at(-1)?.seq ?? -1;
    const second = await openEventStream(gateway.url, session.workflowId, { lastEventId: String(lastSeen) });
    try {
      await second.waitForLog((e) => e.type === 'turn/end');
    } finally {
      second.close();
    }
    const log = await readSessionLog(client.workflow, session.workflowId);
    expect(seqsOf([...first.logEvents(), ...second.logEvents()])).toEqual(seqsOf(log));
    expect(second.logEvents()[0]?.seq).toBe(lastSeen + 1);
    await session.terminate('test cleanup');
  });

  it('resumes after ?after=<seq>, and after Last-Event-ID when a reconnecting browser sends both', async () => {
    const model = newModel('after');
    const session = await start(`echo-${model}`);
    await (await sendMessage(session, 'hello')).outcome;
    const log = await readSessionLog(client.workflow, session.workflowId);
    const byQuery = await openEventStream(gateway.url, session.workflowId, { after: '1' });
    const both = await openEventStream(gateway.url, session.workflowId, { after: '0', lastEventId: '2' });
    try {
      await byQuery.waitForLog((e) => e.type === 'turn/end');
      await both.waitForLog((e) => e.type === 'turn/end');
    } finally {
      byQuery.close();
      both.close();
    }
    expect(seqsOf(byQuery.logEvents())).toEqual(seqsOf(log).filter((s) => s > 1));
    expect(seqsOf(both.logEvents())).toEqual(seqsOf(log).filter((s) => s > 2));
    await session.terminate('test cleanup');
  });

  it('costs the Temporal reads of one viewer for ten, and none for the tokens: one follower per session', async () => {
    /** The reads of `viewers` joining a session that has a turn behind it, then following a streamed turn. */
    const readsOf = async (viewers: number) => {
      const model = newModel(`cost-${viewers}`);
      llm.script(model, { kind: 'text', text: 'first' }, { kind: 'text', text: 'A streamed answer, a few characters at a time, for everyone.', chunkSize: 3, chunkDelayMs: 15 });
      const session = await start(model);
      await (await sendMessage(session, 'one')).outcome;
      const from = reads.length;
      const streams = await Promise.all(Array.from({ length: viewers }, () => openEventStream(gateway.url, session.workflowId)));
      try {
        await Promise.all(streams.map((v) => v.waitForLog((e) => e.type === 'turn/end')));
        expect(gateway.feeds.following).toBe(1);
        await (await sendMessage(session, 'two')).outcome;
        await Promise.all(streams.map((v) => v.waitForLog((e) => e.type === 'turn/end' && e.turn === 2)));
        for (const v of streams) expect(v.messages().some((m) => m.event === 'delta')).toBe(true);
      } finally {
        for (const v of streams) v.close();
      }
      await eventually('the follower to close', () => (gateway.feeds.following === 0 ? true : undefined));
      const cost = reads.slice(from).filter((r) => r.workflowId === session.workflowId).map((r) => r.call).sort();
      const log = await readSessionLog(client.workflow, session.workflowId);
      for (const v of streams) expect(seqsOf(v.logEvents())).toEqual(seqsOf(log));
      await session.terminate('test cleanup');
      return cost;
    };
    const one = await readsOf(1);
    expect(await readsOf(10)).toEqual(one);
    // The catch-up of the follower's first viewer, and the gateway asking once whose session it is.
    expect(one).toEqual(['describe', 'query log', 'query state', 'query state']);
  });

  it('refuses an `after` or Last-Event-ID that is not a seq with a 400 naming it, and an unknown session with a 404', async () => {
    const session = await start(`echo-${newModel('bad')}`);
    const badAfter = await fetch(`${gateway.url}/v1/sessions/${session.workflowId}/events?after=1.5`);
    expect(badAfter.status).toBe(400);
    expect(await badAfter.json()).toEqual({ error: { type: 'invalid_request', message: expect.stringMatching(/^query\.after: must be a log seq/) } });
    const badHeader = await fetch(`${gateway.url}/v1/sessions/${session.workflowId}/events`, { headers: { 'Last-Event-ID': 'abc' } });
    expect(badHeader.status).toBe(400);
    expect(((await badHeader.json()) as { error: { message: string } }).error.message).toMatch(/^header\.last-event-id: must be a log seq/);
    const unknown = await fetch(`${gateway.url}/v1/sessions/no-such-session-${randomUUID()}/events`);
    expect(unknown.status).toBe(404);
    expect(gateway.feeds.following).toBe(0);
    await session.terminate('test cleanup');
  });
});

describe('docs/events.md', () => {
  it("runs the curl example as written: the stream after Last-Event-ID, each log event with its seq", async () => {
    const blocks = await blocksRunBy('test/gateway-events.test.ts');
    const lines = new DocLines(blocks);
    const session = await start(`echo-${newModel('docs')}`);
    await (await sendMessage(session, 'hello')).outcome;
    // As the reader runs it: `$KEY` theirs, the gateway at its default address, `<id>` their session.
    const { argv } = lines.take(/^curl /);
    const [command = '', ...args] = argv.map((word) => word.replace('$KEY', 'the-test-key').replace('http://127.0.0.1:8787', gateway.url).replace('<id>', session.workflowId));
    expect(lines.untaken()).toEqual([]);
    const curl = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    await new Promise<void>((resolve, reject) => {
      curl.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('"type":"turn/end"')) resolve();
      });
      curl.once('exit', (code) => reject(new Error(`curl exited with code ${code} before the turn's end:\n${out}`)));
    });
    curl.kill();
    for (const promise of blocks.flatMap((b) => b.commands.flatMap((c) => c.promises))) expect(out).toMatch(promisePattern(promise));
    const log = await readSessionLog(client.workflow, session.workflowId);
    expect([...out.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))).toEqual(seqsOf(log).filter((seq) => seq > 1));
    await session.terminate('test cleanup');
  });
});
