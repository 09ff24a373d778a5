/**
 * The LLM activity reads the conversation from its worker's copy of the session log
 * (fed by the workflow's sink) and falls back to Queries; either way the provider gets
 * exactly the conversation the call was scheduled with.
 */
import { randomUUID } from 'node:crypto';
import { WithStartWorkflowOperation } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionLogCache, type LogSource } from '../activities/llm/session-log-cache';
import { endSession, sendAndWait, startSession } from '../client/sessions';
import { sendUpdate } from '../contracts/api';
import type { agentSession } from '../workflows/session';
import type { LlmSettings } from '../contracts/llm-call';
import { digestOf } from '../contracts/log-digest';
import { SessionLog, type SessionEvent } from '../contracts/session-log';
import { startHarness, type Harness } from './support/agent-harness';

const SETTINGS: LlmSettings = { tools: [], maxTokens: 1024 };
const RUN = { workflowId: 'session-1', runId: 'run-1' };

function logOf(turns: number): SessionEvent[] {
  const log = new SessionLog();
  for (let turn = 1; turn <= turns; turn++) {
    log.append({ type: 'turn/start', turn, text: `question ${turn}` }, 1_000 + turn);
    log.append({ type: 'turn/end', turn, status: 'completed', reason: 'answered' }, 2_000 + turn);
  }
  return [...log.events];
}

/** The log of a run that continued as new: the same events, numbered on from `base`. */
function carriedFrom(base: number, events: readonly SessionEvent[]): SessionEvent[] {
  return events.map((e) => ({ ...e, seq: base + e.seq }));
}

/** The session's side, as the activity's Queries see it (pages from the run's first event on), counting what was asked. */
function sessionSource(events: readonly SessionEvent[], pageSize = 3) {
  const asked = { settings: 0, pages: [] as number[] };
  const source: LogSource = {
    settings: async () => {
      asked.settings++;
      return SETTINGS;
    },
    page: async (fromSeq) => {
      asked.pages.push(fromSeq);
      return events.filter((e) => e.seq >= fromSeq).slice(0, pageSize);
    },
  };
  return { source, asked };
}

describe('the worker’s copy of a session log', () => {
  const events = logOf(4);
  const digest = digestOf(events);

  it('answers from memory, without a Query, when its copy matches the digest the call was scheduled with', async () => {
    const cache = new SessionLogCache(1024 * 1024);
    cache.open(RUN, SETTINGS, events.slice(0, 2));
    cache.append(RUN, events.slice(2, 5));
    cache.append(RUN, events.slice(5));
    const { source, asked } = sessionSource(events);

    const read = await cache.read(RUN, 6, digestOf(events.slice(0, 6)), source);

    expect(read).toEqual({ settings: SETTINGS, events: events.slice(0, 6), matched: true });
    expect(asked).toEqual({ settings: 0, pages: [] });
    expect(cache.stats()).toMatchObject({ hits: 1, extended: 0, fetched: 0 });
  });

  it('queries only the events after a shorter copy, then keeps them for the next call', async () => {
    const cache = new SessionLogCache(1024 * 1024);
    cache.open(RUN, SETTINGS, events.slice(0, 3));
    const { source, asked } = sessionSource(events);

    expect((await cache.read(RUN, 8, digest, source)).events).toEqual(events);
    expect(asked).toEqual({ settings: 0, pages: [3, 6] });
    await cache.read(RUN, 8, digest, source);
    expect(asked.pages).toEqual([3, 6]);
    expect(cache.stats()).toMatchObject({ hits: 1, extended: 1, fetched: 0 });
  });

  it('reads the whole log, settings included, when it holds nothing for the run', async () => {
    const cache = new SessionLogCache(1024 * 1024);
    const { source, asked } = sessionSource(events);

    expect(await cache.read(RUN, 8, digest, source)).toEqual({ settings: SETTINGS, events, matched: true });
    expect(asked).toEqual({ settings: 1, pages: [0, 3, 6] });
  });

  it('replaces a copy that diverged from the session (an event the history never recorded) with the session’s log', async () => {
    const cache = new SessionLogCache(1024 * 1024);
    const diverged = events.slice(0, 3).map((e) => (e.seq === 1 && e.type === 'turn/end' ? { ...e, status: 'failed' as const } : e));
    cache.open(RUN, SETTINGS, diverged);
    const { source, asked } = sessionSource(events);

    expect((await cache.read(RUN, 8, digest, source)).events).toEqual(events);
    expect(asked.pages).toEqual([3, 6, 0, 3, 6]);
    expect(cache.stats()).toMatchObject({ extended: 0, fetched: 1 });
  });

  it('sends the session’s own log, and says so, when even that no longer matches the digest (a deploy changed how an event is written)', async () => {
    const cache = new SessionLogCache(1024 * 1024);
    const rewritten = events.map((e) => (e.type === 'turn/start' && e.turn === 3 ? { ...e, text: 'another question' } : e));
    const { source } = sessionSource(rewritten);

    const read = await cache.read(RUN, 8, digest, source);

    expect(read).toMatchObject({ events: rewritten, matched: false });
    expect(cache.stats()).toMatchObject({ fetched: 1, mismatched: 1 });
    const again = await cache.read(RUN, 8, digestOf(rewritten), sessionSource(rewritten).source);
    expect(again.matched).toBe(true);
    expect(cache.stats().hits).toBe(1);
  });

  it('reads a call scheduled without a digest (by an older worker) from the session, and keeps nothing of it', async () => {
    const cache = new SessionLogCache(1024 * 1024);
    cache.open(RUN, SETTINGS, events.slice(0, 2));
    const { source, asked } = sessionSource(events);

    expect(await cache.read(RUN, 5, undefined, source)).toEqual({ settings: SETTINGS, events: events.slice(0, 5), matched: true });
    expect(asked).toEqual({ settings: 1, pages: [0, 3] });
    expect(cache.stats()).toMatchObject({ fetched: 1, bytes: events.slice(0, 2).reduce((n, e) => n + JSON.stringify(e).length, 0) });
  });

  it('drops a copy that missed an event, and the run that closed', async () => {
    const cache = new SessionLogCache(1024 * 1024);
    cache.open(RUN, SETTINGS, events.slice(0, 2));
    cache.append(RUN, events.slice(3, 4));
    expect(cache.stats().runs).toBe(0);

    cache.open(RUN, SETTINGS, events);
    cache.close(RUN);
    expect(cache.stats()).toMatchObject({ runs: 0, bytes: 0 });
  });

  it('holds nothing at size 0, not even an empty log', async () => {
    const cache = new SessionLogCache(0);
    cache.open(RUN, SETTINGS, []);
    await cache.read(RUN, 8, digest, sessionSource(events).source);
    expect(cache.stats()).toMatchObject({ runs: 0, bytes: 0, fetched: 1 });
  });

  it('keeps within its size by dropping the least recently read run first', async () => {
    const bytes = events.reduce((n, e) => n + JSON.stringify(e).length, 0);
    const cache = new SessionLogCache(bytes * 2.5);
    const run = (n: number) => ({ workflowId: `session-${n}`, runId: 'run' });
    cache.open(run(1), SETTINGS, events);
    cache.open(run(2), SETTINGS, events);
    await cache.read(run(1), 8, digest, sessionSource(events).source);
    cache.open(run(3), SETTINGS, events);

    const { source, asked } = sessionSource(events);
    await cache.read(run(1), 8, digest, source);
    await cache.read(run(3), 8, digest, source);
    expect(asked.pages).toEqual([]);
    await cache.read(run(2), 8, digest, source);
    expect(asked.pages).toEqual([0, 3, 6]);
    expect(cache.stats().bytes).toBeLessThanOrEqual(bytes * 2.5);
  });
});

describe('the worker’s copy of a run that continued as new (its log starts above seq 0)', () => {
  const events = carriedFrom(40, logOf(4));
  const digestUpto = (uptoSeq: number) => digestOf(events.filter((e) => e.seq < uptoSeq));

  it('answers from memory by seq, without a Query', async () => {
    const cache = new SessionLogCache(1024 * 1024);
    cache.open(RUN, SETTINGS, events.slice(0, 2));
    cache.append(RUN, events.slice(2));
    const { source, asked } = sessionSource(events);

    const read = await cache.read(RUN, 46, digestUpto(46), source);

    expect(read).toEqual({ settings: SETTINGS, events: events.slice(0, 6), matched: true });
    expect(asked).toEqual({ settings: 0, pages: [] });
    expect(cache.stats()).toMatchObject({ hits: 1 });
  });

  it('queries only the seqs after a shorter copy', async () => {
    const cache = new SessionLogCache(1024 * 1024);
    cache.open(RUN, SETTINGS, events.slice(0, 3));
    const { source, asked } = sessionSource(events);

    expect((await cache.read(RUN, 48, digestUpto(48), source)).events).toEqual(events);
    expect(asked.pages).toEqual([43, 46]);
    expect(cache.stats()).toMatchObject({ extended: 1, fetched: 0 });
  });

  it('reads the run whole from its first event when it holds nothing, and keeps it for the next call', async () => {
    const cache = new SessionLogCache(1024 * 1024);
    const { source, asked } = sessionSource(events);

    expect(await cache.read(RUN, 47, digestUpto(47), source)).toEqual({ settings: SETTINGS, events: events.slice(0, 7), matched: true });
    expect(asked).toEqual({ settings: 1, pages: [0, 43, 46] });
    expect(await cache.read(RUN, 44, digestUpto(44), source)).toMatchObject({ events: events.slice(0, 4), matched: true });
    expect(asked.pages).toEqual([0, 43, 46]);
    expect(cache.stats()).toMatchObject({ fetched: 1, hits: 1 });
  });

  it('drops a copy that an append leaves with a gap in its seqs', () => {
    const cache = new SessionLogCache(1024 * 1024);
    cache.open(RUN, SETTINGS, events.slice(0, 2));
    cache.append(RUN, events.slice(2, 3));
    expect(cache.stats().runs).toBe(1);
    cache.append(RUN, events.slice(4, 5));
    expect(cache.stats().runs).toBe(0);
  });

  it('does not answer a carried run’s seqs from a copy numbered from 0', async () => {
    const cache = new SessionLogCache(1024 * 1024);
    cache.open(RUN, SETTINGS, logOf(4));
    const { source } = sessionSource(events);

    const read = await cache.read(RUN, 48, digestUpto(48), source);

    expect(read).toMatchObject({ events, matched: true });
    expect(cache.stats()).toMatchObject({ hits: 0, fetched: 1, mismatched: 0 });
  });
});

describe('the LLM activity on a real worker', () => {
  let h: Harness;
  let uncached: Harness;
  beforeAll(async () => {
    [h, uncached] = await Promise.all([startHarness(), startHarness({ env: { AGENT_LOG_CACHE_MB: '0' } })]);
  });
  afterAll(async () => {
    await Promise.all([h?.close(), uncached?.close()]);
  });

  /** Three tool steps, then an answer: four LLM calls, each with a longer conversation. */
  async function threeToolSteps(agent: Harness, name: string) {
    const model = `cache-${name}-${Date.now()}`;
    const step = (n: number) => ({ kind: 'tool_calls' as const, calls: [{ id: `toolu_${n}`, name: 'calculator', input: { expression: `${n}*${n}` } }] });
    agent.llm.script(model, step(1), step(2), step(3), { kind: 'text', text: 'done' });
    const session = await startSession(agent.client, agent.env, { model: `anthropic:${model}`, idleTimeoutMs: 60_000 });
    return { model, session };
  }
  const conversations = (agent: Harness, model: string) => agent.llm.requests({ model }).map((r) => (r.body as { messages: unknown[] }).messages);

  it('sends every step’s conversation from the worker’s copy, without a Query, and the same conversations as when it reads them by Query', async () => {
    const cached = await threeToolSteps(h, 'on');
    const before = h.logCache.stats();
    expect((await sendAndWait(cached.session, 'square 1, 2 and 3')).status).toBe('completed');
    const after = h.logCache.stats();
    expect(after.hits - before.hits).toBe(4);
    expect(after.extended + after.fetched).toBe(before.extended + before.fetched);

    const queried = await threeToolSteps(uncached, 'off');
    expect((await sendAndWait(queried.session, 'square 1, 2 and 3')).status).toBe('completed');
    expect(uncached.logCache.stats()).toMatchObject({ hits: 0, fetched: 4 });

    const sent = conversations(h, cached.model);
    expect(sent.map((m) => m.length)).toEqual([1, 3, 5, 7]);
    expect(sent).toEqual(conversations(uncached, queried.model));
    await Promise.all([endSession(cached.session), endSession(queried.session)]);
  });

  it('keeps the copy of a session whose first message arrives in the same workflow task as its start', async () => {
    const model = `cache-with-start-${Date.now()}`;
    h.llm.script(model, { kind: 'tool_calls', calls: [{ id: 'toolu_w', name: 'calculator', input: { expression: '6*7' } }] }, { kind: 'text', text: '42' });
    const start = new WithStartWorkflowOperation<typeof agentSession>('agentSession', {
      workflowId: `session-${randomUUID()}`,
      taskQueue: h.taskQueue,
      args: [{ model: `anthropic:${model}`, idleTimeoutMs: 60_000 }],
      workflowIdConflictPolicy: 'FAIL',
    });
    const before = h.logCache.stats();

    const outcome = await h.client.workflow.executeUpdateWithStart(sendUpdate, { args: [{ text: 'six times seven' }], startWorkflowOperation: start });

    expect(outcome.status).toBe('completed');
    const after = h.logCache.stats();
    expect({ hits: after.hits - before.hits, queried: after.extended + after.fetched - before.extended - before.fetched }).toEqual({ hits: 2, queried: 0 });
    await endSession(await start.workflowHandle());
  });

  it('after a worker restart reads the log once by Query, then from the copy the workflow feeds again', async () => {
    const { model, session } = await threeToolSteps(h, 'restart');
    h.llm.script(model, { kind: 'tool_calls', calls: [{ id: 'toolu_9', name: 'calculator', input: { expression: '9' } }] }, { kind: 'text', text: 'again' });
    expect((await sendAndWait(session, 'first')).status).toBe('completed');
    await h.stopWorker();
    await h.startWorker();

    expect((await sendAndWait(session, 'second')).status).toBe('completed');
    expect(h.logCache.stats()).toMatchObject({ fetched: 1, hits: 1 });
    const sent = conversations(h, model);
    expect(sent.map((m) => m.length)).toEqual([1, 3, 5, 7, 9, 11]);
    await endSession(session);
    await session.result();
    expect(h.logCache.stats().runs).toBe(0);
  });
});
