/**
 * The gateway's session API end to end: a real dev server, a real worker process serving
 * agents (test/support/agents-worker.ts), the scripted LLM as the model, and the gateway on
 * a port of this process, reached over HTTP with its keys. Each route is a thin call of
 * the client library; what is proven here is that HTTP reaches it whole, with the key's
 * rights applied.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stateQuery } from '../contracts/api';
import type { SessionEvent } from '../contracts/session-log';
import { startLocalGateway, type LocalGateway } from '../harness/gateway';
import { agentWorkerEnv } from '../harness/worker-env';
import { spawnWorker, type WorkerProcess } from '../harness/worker-process';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { blocksRunBy, DocLines, promisePattern, type DocBlock } from './support/doc-blocks';
import { eventually } from './support/eventually';
import { workerLogFile } from './support/worker-processes';
import { devServerAddress, devServerNamespace, uniqueTaskQueue } from './temporal-env';

const MODEL = `gateway-sessions-${Date.now()}`;
const RAW_MODEL = `${MODEL}-raw`;

let llm: ScriptedLlm;
let worker: WorkerProcess;
let gw: LocalGateway;

beforeAll(async () => {
  llm = await startScriptedLlm();
  const taskQueue = uniqueTaskQueue('gateway-sessions');
  const env = agentWorkerEnv({ address: devServerAddress(), namespace: devServerNamespace(), taskQueue, llmUrl: llm.url, extra: { AGENTS_WORKER_MODEL: MODEL } });
  worker = await spawnWorker({ env, logFile: workerLogFile('gateway-sessions'), entry: path.join(import.meta.dirname, 'support', 'agents-worker.ts') });
  [gw] = await Promise.all([
    startLocalGateway({
      address: devServerAddress(),
      namespace: devServerNamespace(),
      taskQueue,
      uiUrl: 'http://ui.test',
      keys: { admin: { agents: '*', approve: true }, helper: { agents: ['helper'] }, approver: { agents: ['helper'], approve: true } },
    }),
    worker.ready,
  ]);
}, 120_000);

afterAll(async () => {
  await gw?.close();
  await worker?.kill();
  await llm?.close();
});

/** The JSON of an answer, after checking its status (the body says why when it is not the one expected). */
async function expectJson<T = Record<string, unknown>>(response: Promise<Response>, status: number): Promise<T> {
  const answer = await response;
  const text = await answer.text();
  expect(answer.status, text).toBe(status);
  return JSON.parse(text) as T;
}

const as = (key: string) => gw.secrets[key] ?? '';
const post = (p: string, json: unknown, key = 'admin') => gw.request(p, { method: 'POST', json, key: as(key) });
const put = (p: string, json: unknown, key = 'admin') => gw.request(p, { method: 'PUT', json, key: as(key) });
const get = (p: string, key = 'admin') => gw.request(p, { key: as(key) });

async function wholeLog(id: string): Promise<SessionEvent[]> {
  return (await expectJson<{ events: SessionEvent[] }>(get(`/v1/sessions/${id}/log?limit=500`), 200)).events;
}

/** Resolves once the session's log has the turn's end. */
function turnEnded(id: string, turn: number) {
  return eventually(`turn ${turn} of ${id} to end`, async () => (await wholeLog(id)).find((e) => e.type === 'turn/end' && e.turn === turn));
}

function pendingCall(id: string) {
  return eventually(`a call of ${id} to wait for approval`, async () => {
    const state = await expectJson<{ pendingApprovals: { callId: string }[] }>(get(`/v1/sessions/${id}`), 200);
    return state.pendingApprovals[0];
  });
}

describe('agents', () => {
  it('lists the agents a key may start, with their descriptions and models', async () => {
    const all = await expectJson<{ agents: { name: string; model: string; description?: string }[] }>(get('/v1/agents'), 200);
    expect(all.agents).toEqual([
      { name: 'helper', model: `anthropic:${MODEL}`, description: 'answers with a calculator and can write files' },
      { name: 'other', model: `anthropic:${MODEL}` },
    ]);
    const limited = await expectJson<{ agents: { name: string }[] }>(get('/v1/agents', 'helper'), 200);
    expect(limited.agents.map((a) => a.name)).toEqual(['helper']);
  });
});

describe('a session over HTTP', () => {
  it('starts by agent name, answers a message with wait, and shows its state and UI link', async () => {
    llm.script(MODEL, { kind: 'text', text: 'Hello from the helper.' });
    const created = await expectJson<{ sessionId: string; runId: string; uiUrl: string }>(post('/v1/sessions', { agent: 'helper' }, 'helper'), 201);
    expect(created.uiUrl).toBe(`http://ui.test/namespaces/${devServerNamespace()}/workflows/${created.sessionId}/history`);

    const turn = await expectJson<{ turn: number; status: string; messages: { role: string; content: unknown }[] }>(post(`/v1/sessions/${created.sessionId}/messages`, { text: 'hi', wait: true }, 'helper'), 200);
    expect(turn).toMatchObject({ turn: 1, status: 'completed', reason: 'answered' });
    expect(JSON.stringify(turn.messages)).toContain('Hello from the helper.');

    const state = await expectJson(get(`/v1/sessions/${created.sessionId}`, 'helper'), 200);
    expect(state).toMatchObject({ sessionId: created.sessionId, agent: 'helper', model: `anthropic:${MODEL}`, phase: 'idle', turn: 1, pendingApprovals: [], uiUrl: created.uiUrl });
    expect(state.spend).toMatchObject({ outputTokens: expect.any(Number) });
  });

  it('starts from settings with its first message, then takes a message without waiting as the next turn', async () => {
    llm.script(RAW_MODEL, { kind: 'text', text: 'first answer' }, { kind: 'text', text: 'second answer' });
    const fallbackSettings = { fallbacks: ['openai:gpt-5'], fallbackAfterMs: 20_000, fallbackReturnAfterMs: 600_000, priority: 'batch' };
    const created = await expectJson<{ sessionId: string; turn: number }>(post('/v1/sessions', { model: `anthropic:${RAW_MODEL}`, system: 'Be brief.', maxSteps: 2, ...fallbackSettings, message: 'one' }), 201);
    expect(created.turn).toBe(1);
    await turnEnded(created.sessionId, 1);
    const sent = await expectJson<{ turn: number; updateId: string }>(post(`/v1/sessions/${created.sessionId}/messages`, { text: 'two' }), 202);
    expect(sent.turn).toBe(2);
    expect(await turnEnded(created.sessionId, 2)).toMatchObject({ status: 'completed' });
    const [request] = llm.requests({ model: RAW_MODEL });
    expect(JSON.stringify(request?.body)).toContain('Be brief.');
    const state = await expectJson<{ settings: { maxSteps: number } }>(get(`/v1/sessions/${created.sessionId}`), 200);
    expect(state.settings.maxSteps).toBe(2);
    expect(state.settings).toMatchObject(fallbackSettings);
  });

  it('pages the log by fromSeq and limit, across the runs of a session that continued as new', async () => {
    // A tool call makes the turn's history pass 20 events, so the session continues as new after it.
    llm.script(MODEL, { kind: 'tool_calls', calls: [{ id: 'toolu_gwlog1', name: 'calculator', input: { expression: '6*7' } }] }, { kind: 'text', text: '42' }, { kind: 'text', text: 'again' });
    const { sessionId } = await expectJson<{ sessionId: string }>(post('/v1/sessions', { agent: 'helper', continueAsNewAfterEvents: 20, message: 'compute' }), 201);
    await turnEnded(sessionId, 1);
    await eventually('the session to continue as new', async () => ((await gw.client.workflow.getHandle(sessionId).query(stateQuery)).runs > 1 ? true : undefined), 30_000);
    await expectJson(post(`/v1/sessions/${sessionId}/messages`, { text: 'more', wait: true }), 200);

    const all = await wholeLog(sessionId);
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i));
    expect(all.filter((e) => e.type === 'turn/end').map((e) => e.turn)).toEqual([1, 2]);
    const pages: SessionEvent[] = [];
    for (let fromSeq = 0, n = 0; n < 50; n++) {
      const page = await expectJson<{ events: SessionEvent[]; nextFromSeq: number }>(get(`/v1/sessions/${sessionId}/log?fromSeq=${fromSeq}&limit=3`), 200);
      expect(page.events.length).toBeLessThanOrEqual(3);
      pages.push(...page.events);
      if (page.events.length < 3) break;
      fromSeq = page.nextFromSeq;
    }
    expect(pages).toEqual(all);
  });

  it('cancels a running turn', async () => {
    llm.script(MODEL, { kind: 'text', text: 'never sent', hold: true });
    const { sessionId } = await expectJson<{ sessionId: string }>(post('/v1/sessions', { agent: 'helper', message: 'wait for it' }), 201);
    await eventually('the turn to call the model', async () => ((await expectJson<{ phase: string }>(get(`/v1/sessions/${sessionId}`), 200)).phase === 'llm' ? true : undefined));
    const cancelled = await expectJson(post(`/v1/sessions/${sessionId}/cancel`, undefined), 200);
    expect(cancelled).toMatchObject({ cancelled: true, turn: 1, outcome: { status: 'cancelled' } });
    llm.release(MODEL);
  });

  it('waits for a human on a call, refuses a key without approve, and runs the call once approved or not at all once denied', async () => {
    const write = (id: string, file: string) => ({ kind: 'tool_calls' as const, calls: [{ id, name: 'write_file', input: { path: `gateway-${Date.now()}-${file}`, content: 'x' } }] });
    llm.script(MODEL, write('toolu_gwapprove', 'a.txt'), { kind: 'text', text: 'written' }, write('toolu_gwdeny', 'b.txt'), { kind: 'text', text: 'not written' });
    const { sessionId } = await expectJson<{ sessionId: string }>(post('/v1/sessions', { agent: 'helper', message: 'write a' }, 'approver'), 201);
    const call = await pendingCall(sessionId);
    expect(call.callId).toBe('toolu_gwapprove');
    const refused = await expectJson<{ error: { type: string } }>(post(`/v1/sessions/${sessionId}/approvals/${call.callId}`, { approved: true }, 'helper'), 403);
    expect(refused.error.type).toBe('forbidden');
    expect(await expectJson(post(`/v1/sessions/${sessionId}/approvals/${call.callId}`, { approved: true }, 'approver'), 200)).toEqual({ callId: 'toolu_gwapprove', approved: true, applied: true });
    await turnEnded(sessionId, 1);

    await expectJson(post(`/v1/sessions/${sessionId}/messages`, { text: 'write b' }, 'approver'), 202);
    const second = await pendingCall(sessionId);
    expect(await expectJson(post(`/v1/sessions/${sessionId}/approvals/${second.callId}`, { approved: false, reason: 'not today' }, 'approver'), 200)).toMatchObject({ approved: false, applied: true });
    await turnEnded(sessionId, 2);
    const results = (await wholeLog(sessionId)).filter((e) => e.type === 'tool/result');
    expect(results.map((r) => [r.callId, r.code])).toEqual([
      ['toolu_gwapprove', 'ok'],
      ['toolu_gwdeny', expect.not.stringMatching(/^ok$/)],
    ]);
    expect(JSON.stringify(results[1])).toContain('not today');
  });

  it('sets the budget and the retry policy live, refusing a bad limit by its field', async () => {
    const { sessionId } = await expectJson<{ sessionId: string }>(post('/v1/sessions', { agent: 'helper', budget: { usd: 2 } }), 201);
    expect(await expectJson(put(`/v1/sessions/${sessionId}/budget`, { usd: 5, tokens: 100_000, warn: 0.8 }), 200)).toEqual({ usd: 5, tokens: 100_000, warnAt: 0.8 });
    expect(await expectJson(put(`/v1/sessions/${sessionId}/budget`, { usd: null }), 200)).toEqual({ tokens: 100_000, warnAt: 0.8 });
    const bad = await expectJson<{ error: { type: string; message: string } }>(put(`/v1/sessions/${sessionId}/budget`, { usd: -1 }), 400);
    expect(bad.error).toEqual({ type: 'invalid_request', message: 'body.usd: must be more than 0 USD' });
    const state = await expectJson<{ budget: unknown }>(get(`/v1/sessions/${sessionId}`), 200);
    expect(state.budget).toEqual({ tokens: 100_000, warnAt: 0.8 });

    const ladder = await expectJson<{ retryPolicy: { maxRetries: number; baseDelayMs: number } }>(put(`/v1/sessions/${sessionId}/retry-policy`, { maxRetries: 3 }), 200);
    expect(ladder.retryPolicy).toMatchObject({ maxRetries: 3, baseDelayMs: 1_000 });
    expect(await expectJson(put(`/v1/sessions/${sessionId}/retry-policy`, { policy: 'off' }), 200)).toEqual({ retryPolicy: null });
    const badPolicy = await expectJson<{ error: { message: string } }>(put(`/v1/sessions/${sessionId}/retry-policy`, { maxRetries: 0.5 }), 400);
    expect(badPolicy.error.message).toMatch(/^body\.maxRetries: /);
  });

  it('forks a session into one the same keys may use, and ends it', async () => {
    llm.script(MODEL, { kind: 'text', text: 'forked from here' });
    const { sessionId } = await expectJson<{ sessionId: string }>(post('/v1/sessions', { agent: 'helper', message: 'start' }, 'helper'), 201);
    await turnEnded(sessionId, 1);
    const fork = await expectJson<{ sessionId: string; uiUrl: string }>(post(`/v1/sessions/${sessionId}/fork`, {}, 'helper'), 201);
    expect(fork.sessionId).not.toBe(sessionId);
    const forked = await wholeLog(fork.sessionId);
    expect(forked.some((e) => e.type === 'assistant' && JSON.stringify(e.message).includes('forked from here'))).toBe(true);
    expect(await expectJson(get(`/v1/sessions/${fork.sessionId}`, 'helper'), 200)).toMatchObject({ agent: 'helper' });

    expect(await expectJson(post(`/v1/sessions/${fork.sessionId}/end`, undefined, 'helper'), 202)).toEqual({ ending: true });
    await eventually('the fork to end', async () => ((await expectJson<{ status: string }>(get(`/v1/sessions/${fork.sessionId}`), 200)).status === 'ended' ? true : undefined));
    const refused = await expectJson<{ error: { type: string } }>(post(`/v1/sessions/${fork.sessionId}/messages`, { text: 'late' }), 409);
    expect(refused.error.type).toBe('conflict');
  });

  it('lists sessions with the list filters, a limited key seeing only its agents’ sessions', async () => {
    const { sessionId: other } = await expectJson<{ sessionId: string }>(post('/v1/sessions', { agent: 'other' }), 201);
    const { sessionId: helper } = await expectJson<{ sessionId: string }>(post('/v1/sessions', { agent: 'helper' }), 201);
    type Listed = { sessions: { sessionId: string; agent?: string | null; status: string }[] };
    const listed = await eventually('both sessions to be listed', async () => {
      const page = await expectJson<Listed>(get('/v1/sessions?status=idle&limit=100'), 200);
      const ids = page.sessions.map((s) => s.sessionId);
      return ids.includes(other) && ids.includes(helper) ? page : undefined;
    });
    expect(listed.sessions.every((s) => s.status === 'idle')).toBe(true);
    const helpers = await expectJson<Listed>(get('/v1/sessions?agent=helper&limit=100'), 200);
    expect(helpers.sessions.map((s) => s.sessionId)).toContain(helper);
    expect(helpers.sessions.every((s) => s.agent === 'helper')).toBe(true);
    const limited = await expectJson<Listed>(get('/v1/sessions?limit=100', 'helper'), 200);
    expect(limited.sessions.map((s) => s.sessionId)).toContain(helper);
    expect(limited.sessions.map((s) => s.sessionId)).not.toContain(other);
    const bad = await expectJson<{ error: { message: string } }>(get('/v1/sessions?status=sleeping'), 400);
    expect(bad.error.message).toMatch(/^query\.status: /);
  });
});

describe('docs/gateway.md, as written', () => {
  let blocks: DocBlock[];
  let lines: DocLines;
  beforeAll(async () => {
    blocks = await blocksRunBy('test/gateway-sessions.test.ts');
    lines = new DocLines(blocks);
  });
  afterAll(() => {
    expect(lines.untaken()).toEqual([]);
  });

  /** Runs the documented curl command matching `pattern` against this gateway, with the key in $KEY, and checks what it promises. */
  async function curl(pattern: RegExp, id = ''): Promise<string> {
    const { argv } = lines.take(pattern);
    expect(argv[0]).toBe('curl');
    const args = argv.slice(1).map((word) => word.replaceAll('$KEY', as('helper')).replaceAll('http://127.0.0.1:8787', gw.url).replaceAll('<id>', id));
    const { stdout } = await promisify(execFile)('curl', args);
    const promises = blocks.flatMap((b) => b.commands).find((c) => pattern.test(c.line))?.promises ?? [];
    for (const line of promises) expect(stdout).toMatch(promisePattern(line));
    return stdout;
  }

  it('runs a session with curl: the agents, a start with a message, a message waited for, the log', async () => {
    llm.script(MODEL, { kind: 'text', text: '42' }, { kind: 'text', text: '84' });
    await curl(/\/v1\/agents$/);
    const { sessionId } = JSON.parse(await curl(/-d '\{"agent"/)) as { sessionId: string };
    const waited = JSON.parse(await curl(/"wait":true/, sessionId)) as { messages: unknown[] };
    expect(JSON.stringify(waited.messages)).toContain('84');
    const log = JSON.parse(await curl(/\/log\?/, sessionId)) as { events: SessionEvent[] };
    expect(log.events.filter((e) => e.type === 'turn/end')).toHaveLength(2);
  });
});
