import type { BenchEnv } from './bench-env';
import { mapLimit } from './deadline';
import { round } from './stats';
import { stateQuery } from '../contracts/api';
import { endSession, runSessionTurn, sendTurn, startSession, type StartedSession } from './temporal-runs';

export interface MemoryResult {
  sessions: number;
  stepsPerSession: number;
  /** Sessions in the worker's cache once all were idle; should equal `sessions`. */
  cachedWorkflows: number;
  baselineRssMb: number;
  /** (RSS with the sessions started and idle − RSS before), after garbage collection, per session. */
  rssPerSessionKb: number;
  /**
   * The main thread's V8 heap only: workflows run in a worker thread with a heap of its
   * own, which RSS includes and this does not. Near zero, and noisy around it.
   */
  heapPerSessionKb: number;
  /**
   * The same after each session has run a turn of `stepsPerSession` steps and gone idle
   * again: its log is longer, and RSS keeps what the turn's activities touched (malloc
   * rarely gives memory back), so this is an upper bound.
   */
  afterTurnRssPerSessionKb: number;
  afterTurnHeapPerSessionKb: number;
}

/** Sessions started at once while filling the cache: enough to be quick, few enough not to measure a load spike. */
const START_CONCURRENCY = 8;
const KB = 1024;

/**
 * Benchmark 5: what an idle session costs a worker that keeps it cached. A fresh worker
 * process with room for every session is warmed up by a few sessions that end, and
 * measured; then `sessions` sessions are started and left idle (a query makes sure each
 * one's first workflow task has run, so it is in the cache), and the worker is measured
 * again; then each runs one turn and goes idle, and it is measured a third time. Every
 * measurement follows a full garbage collection.
 */
export async function measureIdleMemory(env: BenchEnv, settings: { sessions: number; stepsPerSession: number }): Promise<MemoryResult> {
  const worker = await env.startWorker('agent', { maxCachedWorkflows: settings.sessions + 50 });
  const open: StartedSession[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      const warm = await runSessionTurn(env.client, env.llm, worker.taskQueue, settings.stepsPerSession, 'memory-warmup');
      await endSession(warm.handle);
    }
    const before = await worker.statsAfterGc();
    await mapLimit(Array.from({ length: settings.sessions }), START_CONCURRENCY, async () => {
      const session = await startSession(env.client, env.llm, worker.taskQueue, settings.stepsPerSession, 'memory');
      open.push(session);
      await session.handle.query(stateQuery);
    });
    const idle = await worker.statsAfterGc();
    await mapLimit(open, START_CONCURRENCY, sendTurn);
    const afterTurn = await worker.statsAfterGc();
    const perSessionKb = (bytes: number) => round(bytes / KB / settings.sessions, 1);
    return {
      sessions: settings.sessions,
      stepsPerSession: settings.stepsPerSession,
      cachedWorkflows: afterTurn.cachedWorkflows,
      baselineRssMb: round(before.rssBytes / KB / KB, 1),
      rssPerSessionKb: perSessionKb(idle.rssBytes - before.rssBytes),
      heapPerSessionKb: perSessionKb(idle.heapUsedBytes - before.heapUsedBytes),
      afterTurnRssPerSessionKb: perSessionKb(afterTurn.rssBytes - before.rssBytes),
      afterTurnHeapPerSessionKb: perSessionKb(afterTurn.heapUsedBytes - before.heapUsedBytes),
    };
  } finally {
    await mapLimit(open, START_CONCURRENCY, ({ handle }) => endSession(handle).catch(() => undefined));
    await worker.stop();
  }
}
