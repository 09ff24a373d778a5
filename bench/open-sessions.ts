/**
 * `npm run bench -- --only sessions`: thousands of open sessions on one worker, most of them
 * idle as a chat product's are (issue #32 §3). On the benchmark's dev server, one worker
 * process with a sticky cache of `cacheSize`:
 * - `deepSessions` sessions run one turn of `deepSteps` steps, then `sessions` sessions run
 *   `turnsEach` one-step turns each and are left idle: the later ones push the earlier (and
 *   the deep ones) out of the cache;
 * - the worker's RSS after garbage collection, before and with every session open, per
 *   session it holds in its cache;
 * - then `messages` messages to random open sessions at `ratePerSecond`, and one to each deep
 *   session: from `send` to the session's first LLM request (the scripted LLM's log), for a
 *   session the worker had cached (by the order the sessions were last used) and for one it
 *   had evicted, which must replay its history first; and the worker SDK's own sticky-cache
 *   hit and miss counters over that phase.
 */
import { startAttributePairs } from '../contracts/search-attributes';
import { SESSION_REVISION } from '../contracts/session-revision';
import { setTimeout as sleep } from 'node:timers/promises';
import { SESSION_WORKFLOW, sendUpdate } from '../contracts/api';
import { findFreePort } from '../harness/dev-server';
import type { agentSession } from '../workflows/session';
import type { BenchEnv } from './bench-env';
import { mapLimit } from './deadline';
import type { FirstRequestLatency, OpenSessionsResult, OpenSessionsSettings } from './open-sessions-result';
import { scriptTurn, uniqueModel } from './scripted-turn';
import { percentile, round } from './stats';
import { endSession, type SessionHandle } from './temporal-runs';

/** Sessions opened at once: enough to be quick, few enough not to measure a load spike. */
const OPEN_CONCURRENCY = 8;
/** No session ends by itself while the benchmark runs. */
const IDLE_TIMEOUT_MS = 6 * 3600_000;
/** How long a message's first LLM request may take before the benchmark gives up on it. */
const FIRST_REQUEST_TIMEOUT_MS = 120_000;
const KB = 1024;
const WARMUP_SESSIONS = 3;

interface OpenSession {
  handle: SessionHandle;
  model: string;
  deep: boolean;
}

export async function measureOpenSessions(env: BenchEnv, settings: OpenSessionsSettings, progress: (line: string) => void): Promise<OpenSessionsResult> {
  const started = performance.now();
  const metricsPort = await findFreePort();
  const worker = await env.startWorker('agent', { maxCachedWorkflows: settings.cacheSize }, undefined, { metricsPort });
  const sessions: OpenSession[] = [];
  /** Session index → the order it was last used in: a session is cached when among the last `cacheSize` used. */
  const lastUsed = new Map<OpenSession, number>();
  let uses = 0;
  const used = (session: OpenSession) => lastUsed.set(session, ++uses);
  try {
    // The first sessions load what every later one shares (the workflow bundle's context, the
    // activities' modules, connections): a few run and end before the baseline is taken.
    for (let i = 0; i < WARMUP_SESSIONS; i++) await endSession((await open(env, worker.taskQueue, { deep: false, steps: 1, turns: 1 })).handle);
    const baseline = await worker.statsAfterGc();
    const opening = performance.now();
    progress(`sessions: ${settings.deepSessions} session(s) of ${settings.deepSteps} steps`);
    for (let i = 0; i < settings.deepSessions; i++) {
      const session = await open(env, worker.taskQueue, { deep: true, steps: settings.deepSteps, turns: 1 });
      sessions.push(session);
      used(session);
    }
    progress(`sessions: opening ${settings.sessions} sessions of ${settings.turnsEach} turn(s) each`);
    let opened = 0;
    await mapLimit(Array.from({ length: settings.sessions }), OPEN_CONCURRENCY, async () => {
      const session = await open(env, worker.taskQueue, { deep: false, steps: 1, turns: settings.turnsEach });
      sessions.push(session);
      used(session);
      if (++opened % 500 === 0) progress(`sessions: ${opened} open`);
    });
    const openS = round((performance.now() - opening) / 1000, 1);
    const idle = await worker.statsAfterGc();

    progress(`sessions: ${settings.messages} messages to random sessions at ${settings.ratePerSecond}/s, then one to each deep session`);
    const hitsBefore = await stickyCounts(metricsPort);
    const shallow = sessions.filter((s) => !s.deep);
    const cachedMs: number[] = [];
    const evictedMs: number[] = [];
    const sends: Promise<void>[] = [];
    for (let i = 0; i < settings.messages; i++) {
      const session = shallow[Math.floor(Math.random() * shallow.length)] as OpenSession;
      const cached = uses - (lastUsed.get(session) ?? 0) < settings.cacheSize;
      used(session);
      sends.push(firstRequestMs(env, session).then((ms) => void (cached ? cachedMs : evictedMs).push(ms)));
      await sleep(1000 / settings.ratePerSecond);
    }
    await Promise.all(sends);
    const deepMs: number[] = [];
    for (const session of sessions.filter((s) => s.deep)) deepMs.push(await firstRequestMs(env, session));
    const hitsAfter = await stickyCounts(metricsPort);
    const stickyHits = hitsAfter.hits - hitsBefore.hits;
    const stickyMisses = hitsAfter.misses - hitsBefore.misses;
    return {
      settings,
      openS,
      baselineRssMb: round(baseline.rssBytes / KB / KB, 1),
      openRssMb: round(idle.rssBytes / KB / KB, 1),
      cachedWorkflows: idle.cachedWorkflows,
      rssPerCachedSessionKb: round((idle.rssBytes - baseline.rssBytes) / KB / Math.max(1, idle.cachedWorkflows), 1),
      stickyHits,
      stickyMisses,
      stickyHitRate: stickyHits + stickyMisses === 0 ? null : round(stickyHits / (stickyHits + stickyMisses), 3),
      cached: latencyOf(cachedMs),
      evicted: latencyOf(evictedMs),
      evictedDeep: latencyOf(deepMs),
      durationS: Math.round((performance.now() - started) / 1000),
    };
  } finally {
    await worker.stop();
  }
}

/** A session on the worker's task queue, its `turns` turns of `steps` steps run, left idle. */
async function open(env: BenchEnv, taskQueue: string, shape: { deep: boolean; steps: number; turns: number }): Promise<OpenSession> {
  const model = uniqueModel(shape.deep ? 'deep' : 'open');
  // Started as this release's client starts a session: at its revision, with its search attributes.
  const handle = await env.client.workflow.start<typeof agentSession>(SESSION_WORKFLOW, {
    taskQueue,
    workflowId: `bench-${model}`,
    args: [{ model: `anthropic:${model}`, maxSteps: shape.steps, idleTimeoutMs: IDLE_TIMEOUT_MS, revision: SESSION_REVISION.current }],
    typedSearchAttributes: startAttributePairs(`anthropic:${model}`, 'idle'),
  });
  for (let turn = 1; turn <= shape.turns; turn++) {
    scriptTurn(env.llm, model, shape.steps);
    const outcome = await handle.executeUpdate(sendUpdate, { args: [{ text: 'Compute 6*7, 2^10 and sqrt(16).' }] });
    if (outcome.status !== 'completed') throw new Error(`bench: session ${handle.workflowId}'s turn ${turn} ended ${outcome.status}`);
  }
  return { handle, model, deep: shape.deep };
}

/** One message: from its `send` to the session's first LLM request for it; its turn is awaited too, so the session is idle again after. */
async function firstRequestMs(env: BenchEnv, session: OpenSession): Promise<number> {
  const before = env.llm.requests({ model: session.model }).length;
  env.llm.script(session.model, { kind: 'text', text: 'Done.' });
  const sentAt = Date.now();
  const turn = session.handle.executeUpdate(sendUpdate, { args: [{ text: 'One more, please.' }] });
  const requests = await env.llm.waitForRequests(before + 1, { model: session.model }, FIRST_REQUEST_TIMEOUT_MS);
  await turn;
  return (requests[before]?.at ?? Number.NaN) - sentAt;
}

function latencyOf(samples: readonly number[]): FirstRequestLatency {
  if (samples.length === 0) return { count: 0, p50Ms: null, p99Ms: null, maxMs: null };
  return { count: samples.length, p50Ms: Math.round(percentile(samples, 50)), p99Ms: Math.round(percentile(samples, 99)), maxMs: Math.round(Math.max(...samples)) };
}

/** The worker SDK's sticky-cache counters (`temporal_sticky_cache_hit`, `temporal_sticky_cache_miss`), summed over their labels. */
async function stickyCounts(metricsPort: number): Promise<{ hits: number; misses: number }> {
  const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  if (!response.ok) throw new Error(`bench: the worker's metrics answered ${response.status}`);
  const text = await response.text();
  const sum = (name: string) =>
    text
      .split('\n')
      .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
      .reduce((total, line) => total + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
  return { hits: sum('temporal_sticky_cache_hit'), misses: sum('temporal_sticky_cache_miss') };
}
