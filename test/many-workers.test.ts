/**
 * Three worker processes on one task queue, twelve sessions at once, each calling tools.
 * Mid-turn one worker is SIGKILLed and another SIGTERMed (a fourth starts, as a deploy
 * would start it). Every turn ends completed or failed with a typed failure, every tool
 * call has exactly one result, and an LLM call that lands on a worker which never held
 * the session's log copy sends exactly the session's conversation.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLog, sendAndWait, startSession, type SessionHandle, type TurnResult } from '../client/sessions';
import { startHttpTarget, type HttpTarget } from '../harness/http-target';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { agentWorkerEnv } from '../harness/worker-env';
import type { WorkerProcess } from '../harness/worker-process';
import { conversationOf } from '../contracts/conversation';
import { unpairedToolCalls } from './support/pairing';
import { devServerAddress, devServerNamespace } from './temporal-env';
import { startWorkerProcess } from './support/worker-processes';

const SESSIONS = 12;
const taskQueue = `many-workers-${randomUUID()}`;

let llm: ScriptedLlm;
let target: HttpTarget;
let connection: Connection;
let client: Client;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  llm = await startScriptedLlm();
  // Each session's page is held on its first request (the one the signals interrupt) and answered on a retry.
  target = await startHttpTarget((request) => (request.nth === 0 ? 'hold' : { status: 200, body: `page ${request.path} (retried)` }));
  connection = await Connection.connect({ address: devServerAddress() });
  client = new Client({ connection, namespace: devServerNamespace() });
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill('SIGKILL')));
  await connection?.close();
  await target?.close();
  await llm?.close();
});

async function startWorker(name: string): Promise<WorkerProcess> {
  const env = agentWorkerEnv({ address: devServerAddress(), namespace: devServerNamespace(), taskQueue, llmUrl: llm.url, allowlist: [target.host], extra: { AGENT_SHUTDOWN_GRACE_MS: '20000' } });
  const worker = await startWorkerProcess(name, env);
  workers.push(worker);
  return worker;
}

/** `pid@host`: the SDK's default worker identity, as history records it. */
const pidOf = (identity: string | null | undefined) => Number(identity?.split('@')[0]);

/** The worker process that started each `callLlm` attempt that completed, in order. */
async function llmCallWorkers(handle: SessionHandle): Promise<number[]> {
  const history = await client.workflow.getHandle(handle.workflowId).fetchHistory();
  const events = history.events ?? [];
  const scheduled = new Map<string, string>();
  const started = new Map<string, number>();
  const pids: number[] = [];
  for (const e of events) {
    const id = String(e.eventId);
    if (e.activityTaskScheduledEventAttributes) scheduled.set(id, e.activityTaskScheduledEventAttributes.activityType?.name ?? '');
    const s = e.activityTaskStartedEventAttributes;
    if (s) started.set(String(s.scheduledEventId), pidOf(s.identity));
    const c = e.activityTaskCompletedEventAttributes;
    if (c && scheduled.get(String(c.scheduledEventId)) === 'callLlm') pids.push(started.get(String(c.scheduledEventId)) ?? Number.NaN);
  }
  return pids;
}

describe('three workers on one task queue', () => {
  it('keep 12 sessions whole through a SIGKILL and a SIGTERM mid-turn', { timeout: 240_000 }, async () => {
    const [first, second] = await Promise.all([startWorker('many-1'), startWorker('many-2'), startWorker('many-3')]);
    const models = Array.from({ length: SESSIONS }, (_, i) => `many-${i}-${randomUUID()}`);
    const sessions: SessionHandle[] = [];
    const turns: Promise<TurnResult>[] = [];
    for (const [i, model] of models.entries()) {
      llm.script(
        model,
        { kind: 'tool_calls', calls: [{ name: 'calculator', input: { expression: `${i} + 1` } }, { name: 'http_request', input: { method: 'GET', url: `${target.url}/page/${i}` } }] },
        { kind: 'text', text: `done ${i}` },
      );
      const session = await startSession(client, { AGENT_TASK_QUEUE: taskQueue }, { model: `anthropic:${model}` });
      sessions.push(session);
      turns.push(sendAndWait(session, `fetch page ${i}`));
    }
    // Every session is mid-turn: its page request is in flight on one of the three workers.
    await target.waitFor('/page/', SESSIONS, 60_000);

    process.kill(first!.pid, 'SIGKILL');
    process.kill(second!.pid, 'SIGTERM');
    const replacement = startWorker('many-4');
    // The stopped worker's calls finish within its grace; the killed worker's are retried elsewhere.
    for (let i = 0; i < SESSIONS; i++) target.release(`/page/${i}`, { status: 200, body: `page ${i}` });
    await replacement;
    expect(await first!.exited).toBeNull();
    expect(await second!.exited).toBe(0);

    const outcomes = await Promise.all(turns);
    for (const outcome of outcomes) {
      if (outcome.status === 'completed') continue;
      expect(outcome.failure?.type, JSON.stringify(outcome)).toEqual(expect.any(String));
    }
    expect(outcomes.filter((o) => o.status === 'completed').length).toBeGreaterThan(0);

    let movedLlmCalls = 0;
    for (const [i, session] of sessions.entries()) {
      const conversation = conversationOf(await readLog(session));
      const calls = conversation.flatMap((m) => (m.role === 'assistant' ? m.toolCalls.map((c) => c.id) : []));
      const results = conversation.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : []));
      expect(results.sort(), `session ${i}: one result per tool call`).toEqual(calls.sort());
      if (outcomes[i]?.status !== 'completed') continue;

      // The second LLM call sent the whole conversation so far, every call paired.
      const requests = llm.requests({ model: models[i] });
      const last = requests.at(-1);
      expect(unpairedToolCalls(last?.body)).toEqual([]);
      const sent = JSON.stringify(last?.body);
      expect(sent).toContain(`fetch page ${i}`);
      expect(sent).toContain(`page ${i}`);
      expect(sent).toContain(String(i + 1));
      const [firstCall, secondCall] = await llmCallWorkers(session);
      if (firstCall !== secondCall) movedLlmCalls++;
    }
    // Two of the three first workers are gone: sessions they ran made their next call elsewhere.
    expect(movedLlmCalls).toBeGreaterThan(0);
  });
});
