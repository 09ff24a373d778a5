/**
 * The live stream from the worker (docs/live-stream.md): a real worker process with the
 * embedded stream (its default) publishing to this file's subscriber on a real Unix socket,
 * the scripted LLM streaming slowly as the model. The transports alone are
 * test/live-stream-transport.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decideApprovalUpdate } from '../contracts/api';
import type { DeltaFrame, ProgressFrame, SessionFrame } from '../contracts/live-stream';
import type { SessionEvent } from '../contracts/session-log';
import { readLog, sendAndWait, startSession } from '../client/sessions';
import { sendMessage } from '../client/turn-control';
import { agentWorkerEnv } from '../harness/worker-env';
import type { WorkerProcess } from '../harness/worker-process';
import { EmbeddedSubscriber } from '../streaming/embedded-subscriber';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { barrier, within } from './support/barrier';
import { follow, textDeltas } from './support/live-frames';
import { startWorkerProcess } from './support/worker-processes';
import { devServerAddress, devServerNamespace, uniqueTaskQueue } from './temporal-env';

let dir: string;
let llm: ScriptedLlm;
let client: Client;
let worker: WorkerProcess;
let gateway: EmbeddedSubscriber;
let taskQueue: string;
const run = randomUUID().slice(0, 8);

const progress = (frames: SessionFrame[], state: ProgressFrame['state']) => frames.filter((f): f is ProgressFrame => f.kind === 'progress' && f.state === state);
const logEvents = (frames: SessionFrame[]): SessionEvent[] => frames.flatMap((f) => (f.kind === 'log' ? f.events : []));
const turnIdle = (turn: number) => (f: SessionFrame) => f.kind === 'progress' && f.state === 'turn_idle' && f.turn === turn;

/** The deltas' text, checked to follow on from each other from offset 0. */
function assembled(frames: DeltaFrame[]): string {
  let text = '';
  for (const frame of frames) {
    expect(frame.offset, `a delta at offset ${frame.offset} after ${text.length} characters`).toBe(text.length);
    text += frame.text;
  }
  return text;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'live-'));
  const socketPath = path.join(dir, 'gw.sock');
  gateway = await EmbeddedSubscriber.listen(socketPath, { log: () => undefined });
  const hello = barrier();
  gateway.onResync(() => hello.open());
  llm = await startScriptedLlm();
  taskQueue = uniqueTaskQueue('live-stream');
  client = new Client({ connection: await Connection.connect({ address: devServerAddress() }), namespace: devServerNamespace() });
  worker = await startWorkerProcess(
    'live-stream',
    agentWorkerEnv({ address: devServerAddress(), namespace: devServerNamespace(), taskQueue, llmUrl: llm.url, extra: { AGENT_LIVE_STREAM: 'embedded', AGENT_LIVE_STREAM_SOCKET: socketPath } }),
  );
  await within(hello.wait(), "the worker's hello on the gateway's socket", 30_000);
}, 120_000);

afterAll(async () => {
  await worker?.kill('SIGKILL');
  await client?.connection.close();
  await llm?.close();
  await gateway?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the worker on the embedded stream', () => {
  it("publishes every delta of a streamed answer, in order, before the log's assistant event, and every appended event in log frames", async () => {
    const model = `live-answer-${run}`;
    const text = 'The quick brown fox jumps over the lazy dog, and back again.';
    llm.script(model, { kind: 'text', text, chunkSize: 4, chunkDelayMs: 15 });
    const workflowId = `live-answer-${run}`;
    const followed = follow(gateway, workflowId);
    const session = await startSession(client, { AGENT_TASK_QUEUE: taskQueue }, { model: `anthropic:${model}`, workflowId });
    await sendAndWait(session, 'tell me about the fox');
    await followed.until('the turn gone idle', turnIdle(1));
    const { frames } = followed;

    const text1 = textDeltas(frames, 1);
    expect(text1.length, 'streamed in pieces, not as one').toBeGreaterThan(5);
    expect(assembled(text1)).toBe(text);
    expect(text1.every((f) => f.turn === 1 && f.step === 1)).toBe(true);
    const assistantAt = frames.findIndex((f) => f.kind === 'log' && f.events.some((e) => e.type === 'assistant'));
    expect(assistantAt).toBeGreaterThan(frames.lastIndexOf(text1.at(-1) as DeltaFrame));
    expect(frames.findIndex((f) => f.kind === 'progress' && f.state === 'llm_started')).toBeLessThan(frames.indexOf(text1[0] as DeltaFrame));

    // Every event the session appended, as the log has it, in seq order (a continued run's opening repeats none here).
    const published = logEvents(frames);
    expect(published).toEqual(await readLog(session));
    const [budget] = progress(frames, 'budget');
    expect(budget).toMatchObject({ turn: 1, step: 1, spend: { outputTokens: expect.any(Number) } });
    expect(progress(frames, 'turn_idle')[0]?.line).toMatch(/^turn 1 completed · spent /);
    await session.terminate('live stream test cleanup');
  });

  it("starts a retry's deltas again at offset 0 under the new attempt, and writes no delta's text into history", async () => {
    const model = `live-retry-${run}`;
    const lost = `LOST-ATTEMPT-${run}`;
    llm.script(model, { kind: 'stream_error', text: `${lost} and more of it`, chunkSize: 5 }, { kind: 'text', text: 'the second attempt answers', chunkSize: 5 });
    const workflowId = `live-retry-${run}`;
    const followed = follow(gateway, workflowId);
    const session = await startSession(client, { AGENT_TASK_QUEUE: taskQueue }, { model: `anthropic:${model}`, workflowId, retryPolicy: { maxRetries: 3, baseDelayMs: 100, maxDelayMs: 100, budgetMs: 20_000, maxServerWaitMs: 0 } });
    await sendAndWait(session, 'try twice');
    await followed.until('the turn gone idle', turnIdle(1));
    const { frames } = followed;

    expect(assembled(textDeltas(frames, 1))).toContain(lost);
    expect(progress(frames, 'llm_retrying')).toEqual([expect.objectContaining({ attempt: 2, maxAttempts: 4, failureType: 'overloaded', line: expect.stringMatching(/^retrying in \d+ s \(attempt 2\/4\): overloaded$/) })]);
    expect(assembled(textDeltas(frames, 2))).toBe('the second attempt answers');
    const history = textOf(await session.fetchHistory());
    expect(history).toContain('the second attempt answers');
    expect(history).not.toContain(lost);
    await session.terminate('live stream test cleanup');
  });

  it('says when a call waits for approval and how it was decided, after the log that led to it', async () => {
    const model = `live-approval-${run}`;
    llm.script(model, { kind: 'tool_calls', calls: [{ id: 'toolu_live1', name: 'calculator', input: { expression: '6*7' } }] }, { kind: 'text', text: 'It is 42.' });
    const workflowId = `live-approval-${run}`;
    const followed = follow(gateway, workflowId);
    const session = await startSession(client, { AGENT_TASK_QUEUE: taskQueue }, { model: `anthropic:${model}`, workflowId, approvalRequired: ['calculator'] });
    const sent = await sendMessage(session, 'what is six times seven?');
    await followed.until('the call waiting for approval', (f) => f.kind === 'progress' && f.state === 'approval_waiting');
    const waitingAt = followed.frames.findIndex((f) => f.kind === 'progress' && f.state === 'approval_waiting');
    expect(logEvents(followed.frames.slice(0, waitingAt)).some((e) => e.type === 'assistant' && e.message.toolCalls.length === 1)).toBe(true);
    await session.executeUpdate(decideApprovalUpdate, { args: [{ callId: 'toolu_live1', approved: true }] });
    await sent.outcome;
    await followed.until('the turn gone idle', turnIdle(1));

    expect(progress(followed.frames, 'approval_waiting')).toEqual([expect.objectContaining({ callId: 'toolu_live1', toolName: 'calculator', line: 'waiting for approval of calculator #toolu_live1' })]);
    expect(progress(followed.frames, 'approval_decided')).toEqual([expect.objectContaining({ callId: 'toolu_live1', outcome: 'approved' })]);
    expect(logEvents(followed.frames).map((e) => e.seq)).toEqual((await readLog(session)).map((e) => e.seq));
    await session.terminate('live stream test cleanup');
  });
});

/** Every string of a history, its payloads' bytes decoded: what a search of the history finds. */
function textOf(value: unknown): string {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(textOf).join('\n');
  if (value && typeof value === 'object') return Object.values(value).map(textOf).join('\n');
  return '';
}
