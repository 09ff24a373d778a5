import { setTimeout as sleep } from 'node:timers/promises';
import type { Client, WorkflowExecutionStatusName } from '@temporalio/client';
import { logQuery, stateQuery, type PendingApproval, type SessionState } from '../contracts/api';
import type { Spend } from '../contracts/spend';
import type { SessionEvent } from '../contracts/session-log';
import { contextOncePerStep, describeProgress, pendingActivities, readContext, type ActivityProgress } from './progress';
import { readLogPages } from '../contracts/log-pages';
import { readSessionLog } from './log-chain';
import type { SessionHandle } from './sessions';
import { childProgressLines, OpenChildCalls, readChildProgress, type ChildCall } from './sub-agent-progress';

/** What `watch` reports, in order. Also the stable shape of `watch --json` (one object per line). */
export type WatchItem =
  | { type: 'event'; event: SessionEvent }
  | {
      type: 'progress';
      /** Human lines, e.g. `turn 1 · step 1/50 · llm anthropic:… · retrying in 12 s (attempt 3/11): overloaded`. */
      lines: string[];
      turn: number;
      step: number;
      /** The turn's step limit (the session's `maxSteps`). */
      maxSteps: number;
      phase: 'idle' | 'llm' | 'tools' | 'approval';
      activities: ActivityProgress[];
      pendingApprovals: PendingApproval[];
      /** What the session has spent so far (tokens and `costUsd`, null when a model has no price). */
      spend: Spend;
      /**
       * The context window the session compacts against; null: the model's is unknown and
       * it never compacts (set --context-window). Absent from a session on a worker
       * version from before compaction.
       */
      contextWindow?: number | null;
      /** The session's model. */
      model: string;
      /**
       * The sub-agent the running step waits on (docs/sub-agents.md), read as this session is:
       * its own step and activities, which `lines` show under its agent's name. Absent otherwise.
       */
      child?: ChildCall & { step: number; maxSteps: number; phase: 'idle' | 'llm' | 'tools' | 'approval'; activities: ActivityProgress[] };
    }
  | { type: 'unavailable'; message: string }
  | { type: 'end'; reason: WatchEndReason; executionStatus: WorkflowExecutionStatusName };

/**
 * - `closed`: the session's workflow has closed (ended, timed out idle, terminated);
 * - `idle`: with `untilIdle`, no turn runs and none is queued;
 * - `done`: the `until` promise settled (e.g. the turn `send --wait` waits for);
 * - `interrupted`: the signal fired (Ctrl-C).
 */
export type WatchEndReason = 'closed' | 'idle' | 'done' | 'interrupted';

export interface WatchOptions {
  /** Stop once no turn runs and none is queued. Default false: follow until the session closes. */
  untilIdle?: boolean;
  /** Stop once this settles, after a last read of the log. */
  until?: Promise<unknown>;
  /** Log events from this seq on. Default: from the start of the latest turn. */
  fromSeq?: number;
  /** Default 500 ms. */
  intervalMs?: number;
  signal?: AbortSignal;
  onItem(item: WatchItem): void;
}

/**
 * Per read, how long a Query may take. With no worker polling, a Query waits until the
 * server gives up on it, much longer than a person watching wants to stare at nothing.
 */
const QUERY_DEADLINE_MS = 5_000;

/**
 * Follows a session live, by polling: Temporal has no push channel for a workflow's
 * Queries or its pending activities. Each round reads the workflow's description (its
 * pending activities: attempts, last failure, next attempt time, heartbeat details with
 * the streamed text), and, when its history has grown since, the session's state and the
 * log events appended. Nothing here writes to history, so watching never changes what replays.
 */
export async function watchSession(client: Client, handle: SessionHandle, options: WatchOptions): Promise<WatchEndReason> {
  const { onItem, signal } = options;
  const intervalMs = options.intervalMs ?? 500;
  let settled = false;
  void options.until?.then(
    () => (settled = true),
    () => (settled = true),
  );
  const query = <T>(read: () => Promise<T>) => client.withDeadline(Date.now() + QUERY_DEADLINE_MS, read);

  let fromSeq = options.fromSeq;
  const childCalls = new OpenChildCalls();
  /** Every event appended since the last call; the log Query answers in pages, so until an empty one. */
  const drainLog = async () => {
    let from = fromSeq ?? (await query(() => latestTurnStart(handle)));
    for (;;) {
      const page = await query(() => handle.query(logQuery, { fromSeq: from }));
      const first = page[0]?.seq;
      if (first === undefined) break;
      // The session continued as new since the last read, and the new run holds only the
      // tail after a compaction: what was appended before it is read from the runs before.
      const missed = first > from ? await query(() => readSessionLog(client.workflow, handle.workflowId, { fromSeq: from, uptoSeq: first })) : [];
      const events = [...missed, ...page];
      for (const event of events) {
        childCalls.observe(event);
        onItem({ type: 'event', event });
      }
      // Seqs are the session's, across runs: the next page starts after the last event read.
      from = (events.at(-1)?.seq ?? from) + 1;
    }
    fromSeq = from;
  };

  /** What the session says of its context: a provider's reported usage that looks wrong. */
  const contextOf = contextOncePerStep(() => query(() => readContext(handle)));

  let lastProgress = '';
  let lastUnavailable = '';
  /** The state read when the run's history was this long: the state and the log change only as the history grows. */
  let read: { runId: string; historyLength: number; state: SessionState } | undefined;
  for (;;) {
    if (signal?.aborted) return end('interrupted');
    const wasSettled = settled;
    const description = await handle.describe();
    if (description.status.name !== 'RUNNING') {
      // A closed session's Queries are answered by replaying it on a worker; without one
      // the last events are skipped rather than waited for.
      await drainLog().catch(() => undefined);
      return end('closed', description.status.name);
    }
    try {
      // Queries are billed, a description is not: a round that finds the history as long as
      // the last one (an LLM call streaming, a retry's backoff) reads only the description,
      // whose pending activities carry what changes meanwhile. So a turn costs Queries per
      // workflow task, not per round (docs/cost.md).
      const state = read?.runId === description.runId && read.historyLength === description.historyLength ? read.state : (await Promise.all([query(() => handle.query(stateQuery)), drainLog()]))[0];
      read = { runId: description.runId, historyLength: description.historyLength, state };
      lastUnavailable = '';
      // A step whose tools wait on a sub-agent shows the child's progress too: the parent has no activity of its own then.
      const child = state.phase === 'tools' ? childCalls.latest() : undefined;
      const [activities, stepContext, childProgress] = await Promise.all([
        pendingActivities(client, description),
        contextOf(state),
        child ? query(() => readChildProgress(client, child)).catch(() => undefined) : undefined,
      ]);
      const now = Date.now();
      const lines = describeProgress({ state, activities, ...(stepContext ? { context: stepContext } : {}) }, now);
      const childLines = child && childProgress ? childProgressLines(child, childProgress, now) : [];
      lines.push(...childLines);
      const key = lines.join('\n');
      if (key !== lastProgress) {
        lastProgress = key;
        onItem({
          type: 'progress',
          lines,
          turn: state.turn,
          step: state.step,
          maxSteps: state.settings.maxSteps,
          phase: state.phase,
          activities,
          pendingApprovals: state.pendingApprovals,
          spend: state.spend,
          ...(state.contextWindow === undefined ? {} : { contextWindow: state.contextWindow }),
          model: state.model,
          ...(child && childProgress && childLines.length > 0
            ? {
                child: {
                  ...child,
                  step: childProgress.state.step,
                  maxSteps: childProgress.state.settings.maxSteps,
                  phase: childProgress.state.phase,
                  activities: childProgress.activities,
                },
              }
            : {}),
        });
      }
      if (wasSettled) {
        await drainLog();
        return end('done');
      }
      if (options.untilIdle && (state.status === 'idle' || state.status === 'failed') && state.queued === 0) {
        // The turn may have closed between the two reads above: read its last events.
        await drainLog();
        return end('idle');
      }
    } catch (error) {
      const message = `the session does not answer (is a worker running on its task queue?): ${error instanceof Error ? error.message : String(error)}`;
      if (message !== lastUnavailable) onItem({ type: 'unavailable', message });
      lastUnavailable = message;
    }
    // Without `until`, the pause alone: a race with undefined would not wait at all.
    await Promise.race([sleep(intervalMs, undefined, signal ? { signal } : {}).catch(() => undefined), ...(options.until ? [options.until.catch(() => undefined)] : [])]);
  }

  function end(reason: WatchEndReason, executionStatus: WorkflowExecutionStatusName = 'RUNNING'): WatchEndReason {
    onItem({ type: 'end', reason, executionStatus });
    return reason;
  }
}

/**
 * The seq of the latest `turn/start`, so `watch` opens with the turn in progress rather
 * than the whole past. Only the latest run is read: a session continues as new between
 * turns, so a turn in progress started in it.
 */
async function latestTurnStart(handle: SessionHandle): Promise<number> {
  const events = await readLogPages((fromSeq) => handle.query(logQuery, { fromSeq }));
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i];
    if (event?.type === 'turn/start') return event.seq;
  }
  return (events.at(-1)?.seq ?? -1) + 1;
}
