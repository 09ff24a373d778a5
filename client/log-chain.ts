import type { WorkflowClient } from '@temporalio/client';
import { ConfigError } from '../config/config-error';
import { logQuery, stateQuery, type SessionState } from '../contracts/api';
import { readLogPages } from '../contracts/log-pages';
import { retryQueryTimeouts } from './query-timeout-retry';
import type { SessionEvent } from '../contracts/session-log';

/**
 * A session's log across its runs. A run that continued as new holds only the tail of the
 * log (the events after the last compaction), so the earlier events are read from the runs
 * before it: each run's `state` Query names the seq of its first event and the run it
 * continued from. Seqs are the session's own, the same in every run that holds an event.
 */

/** One run of a session, as its `state` Query describes it. */
export interface SessionRun {
  runId: string;
  /** The seq of the run's first event; the events before it are in `continuedFromRunId`. */
  firstSeq: number;
  continuedFromRunId?: string;
  /** The seq the run's next event gets (for a closed run: one past its last). */
  nextSeq: number;
}

/** How the chain reader reaches the runs: the Temporal one is {@link temporalSessionRuns}; tests give their own. */
export interface SessionRuns {
  /** The run that is the session now. */
  latest(): Promise<SessionRun>;
  /** A run that another continued from: closed, so its answer may be kept. */
  run(runId: string): Promise<SessionRun>;
  /** One page of a run's log from `fromSeq` (see contracts/log-pages.ts). */
  page(runId: string, fromSeq: number): Promise<SessionEvent[]>;
}

export interface LogRange {
  /** The first seq wanted; default 0. */
  fromSeq?: number;
  /** One past the last seq wanted; default: to the end of the latest run. */
  uptoSeq?: number;
}

/**
 * The part of the log a run is read for: from its first event up to where the next run
 * takes over. The runs overlap (a run holds the tail it was given, which its predecessor
 * holds too), so each event is read from the latest run that holds it.
 */
interface Segment {
  run: SessionRun;
  /** One past the last seq this run is read for; Infinity for the latest run, which may still grow. */
  endSeq: number;
}

/**
 * Reads `range` of the session's log: the latest run first, then, while the seqs wanted
 * are below a run's `firstSeq`, the run it continued from. Events come oldest first.
 */
export async function readLogChain(runs: SessionRuns, range: LogRange = {}): Promise<SessionEvent[]> {
  const fromSeq = range.fromSeq ?? 0;
  const uptoSeq = range.uptoSeq ?? Number.POSITIVE_INFINITY;
  const segments: Segment[] = [];
  for await (const segment of segmentsBack(runs)) {
    segments.unshift(segment);
    if (segment.run.firstSeq <= fromSeq) break;
  }
  const events: SessionEvent[] = [];
  for (const segment of segments) {
    const from = Math.max(fromSeq, segment.run.firstSeq);
    const upto = Math.min(uptoSeq, segment.endSeq);
    if (from < upto) events.push(...(await readSegment(runs, segment, from, upto)));
  }
  return contiguous(events);
}

/**
 * What a fork at `atSeq` (default: the last event) starts from: the events up to and
 * including `atSeq`, from just after the last compaction at or before it (that compaction
 * included), as a run that continues as new carries them. The runs are read latest first
 * and only as far back as that compaction, so forking a long session reads and carries
 * only its tail.
 */
export async function readForkTail(runs: SessionRuns, atSeq?: number): Promise<SessionEvent[]> {
  return (await readForkStart(runs, atSeq)).events;
}

export interface ForkStart {
  /** The tail the fork is given (see {@link readForkTail}). */
  events: SessionEvent[];
  /** The latest MCP tool list at or before the cut when it falls before the tail: the fork records it again first, as a continued run does. */
  toolsListed?: ToolsListed;
}

type ToolsListed = Extract<SessionEvent, { type: 'tools/listed' }>;

/**
 * The tail a fork at `atSeq` is given, and, with `toolList`, the latest MCP tool list at or
 * before the cut that the tail leaves out. That list is looked for further back only when
 * the events read for the tail lack it: every run that continued as new recorded a copy
 * of a list its tail left out, so it is seldom more than a run back.
 */
export async function readForkStart(runs: SessionRuns, atSeq?: number, options: { toolList?: boolean } = {}): Promise<ForkStart> {
  let cut = atSeq;
  let kept: SessionEvent[] = [];
  let oldest: SessionRun | undefined;
  const back = segmentsBack(runs);
  for (let next = await back.next(); !next.done; next = await back.next()) {
    const segment = next.value;
    const { run } = segment;
    if (oldest === undefined) {
      cut ??= run.nextSeq - 1;
      if (cut >= run.nextSeq) throw new ConfigError(`--at ${cut} is past the end of the source log (its last event is ${run.nextSeq - 1})`);
    }
    oldest = run;
    const upto = Math.min(segment.endSeq, (cut ?? -1) + 1);
    if (run.firstSeq < upto) kept = [...(await readSegment(runs, segment, run.firstSeq, upto)), ...kept];
    const compaction = lastCompaction(kept);
    if (compaction && (kept[0]?.seq ?? 0) <= compaction.throughSeq + 1) {
      const events = contiguous(kept.filter((e) => e.seq > compaction.throughSeq));
      if (!options.toolList || latestToolList(events)) return { events };
      const toolsListed = latestToolList(kept.filter((e) => e.seq <= compaction.throughSeq)) ?? (await toolListBefore(runs, back, kept[0]?.seq ?? 0));
      return toolsListed ? { events, toolsListed } : { events };
    }
  }
  // Only a fork's log starts after 0: it holds its source's events from the compaction it was cut after.
  if (oldest && cut !== undefined && cut >= 0 && cut < oldest.firstSeq) {
    throw new ConfigError(`--at ${cut} is before the start of the source log (its first event is ${oldest.firstSeq})`);
  }
  return { events: contiguous(kept) };
}

/** The latest tool list in the runs still to be read, below `belowSeq`, the runs read latest first until one has it. */
async function toolListBefore(runs: SessionRuns, back: AsyncGenerator<Segment>, belowSeq: number): Promise<ToolsListed | undefined> {
  let below = belowSeq;
  for (let next = await back.next(); !next.done; next = await back.next()) {
    const segment = next.value;
    const upto = Math.min(segment.endSeq, below);
    if (segment.run.firstSeq < upto) {
      const found = latestToolList(await readSegment(runs, segment, segment.run.firstSeq, upto));
      if (found) return found;
    }
    below = Math.min(below, segment.run.firstSeq);
  }
  return undefined;
}

function latestToolList(events: readonly SessionEvent[]): ToolsListed | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e?.type === 'tools/listed') return e;
  }
  return undefined;
}

/** The runs from the latest back to the first, each with the seq where its successor takes over. */
async function* segmentsBack(runs: SessionRuns): AsyncGenerator<Segment> {
  let run = await runs.latest();
  let endSeq = Number.POSITIVE_INFINITY;
  const seen = new Set<string>();
  for (;;) {
    seen.add(run.runId);
    yield { run, endSeq };
    // A run with nothing before it in another run (the first, or one that was carried the whole log) ends the chain.
    if (run.firstSeq === 0 || run.continuedFromRunId === undefined || seen.has(run.continuedFromRunId)) return;
    endSeq = run.firstSeq;
    run = await runs.run(run.continuedFromRunId);
  }
}

function readSegment(runs: SessionRuns, { run }: Segment, from: number, upto: number): Promise<SessionEvent[]> {
  return readLogPages((seq) => runs.page(run.runId, seq), upto, from);
}

function lastCompaction(events: readonly SessionEvent[]): Extract<SessionEvent, { type: 'context/compacted' }> | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e?.type === 'context/compacted') return e;
  }
  return undefined;
}

/**
 * The events, refused if they skip a seq: a gap would be a log that silently lacks
 * events, which a fork would carry on from and `log --json` would present as whole.
 */
function contiguous(events: SessionEvent[]): SessionEvent[] {
  for (let i = 1; i < events.length; i++) {
    const [before, event] = [events[i - 1] as SessionEvent, events[i] as SessionEvent];
    if (event.seq !== before.seq + 1) throw new Error(`the session log skips from seq ${before.seq} to ${event.seq}: a run of the session did not answer with all its events`);
  }
  return events;
}

/**
 * The runs of session `workflowId` as Temporal holds them. Each is queried by its run id,
 * so a session that continues as new while it is read is not read half from one run and
 * half from the next; a closed run's Queries are answered by a worker replaying it.
 */
export function temporalSessionRuns(workflows: Pick<WorkflowClient, 'getHandle'>, workflowId: string): SessionRuns {
  const read = async (runId: string): Promise<SessionRun> => {
    // A run on a worker version from before the log spanned runs answers without firstSeq: it holds the whole log.
    const state = (await retryQueryTimeouts(() => workflows.getHandle(workflowId, runId).query(stateQuery))) as Partial<SessionState> & Pick<SessionState, 'events'>;
    return {
      runId,
      firstSeq: state.firstSeq ?? 0,
      ...(state.continuedFromRunId ? { continuedFromRunId: state.continuedFromRunId } : {}),
      nextSeq: state.events,
    };
  };
  // A run asked for by id is one that another continued from: closed, so its answer never
  // changes, and each Query to it costs a worker a replay of its whole history. A fork
  // walks the chain twice at once (its tail and the counts after its cut): each such run
  // is asked once. The latest run is asked each time: it may still be growing.
  const closed = new Map<string, Promise<SessionRun>>();
  return {
    async latest() {
      const description = await workflows.getHandle(workflowId).describe();
      return read(description.runId);
    },
    run(runId) {
      const known = closed.get(runId);
      if (known) return known;
      const reading = read(runId);
      closed.set(runId, reading);
      reading.catch(() => closed.delete(runId));
      return reading;
    },
    page: (runId, fromSeq) => retryQueryTimeouts(() => workflows.getHandle(workflowId, runId).query(logQuery, { fromSeq })),
  };
}

/** `range` of session `workflowId`'s log, across its runs. */
export function readSessionLog(workflows: Pick<WorkflowClient, 'getHandle'>, workflowId: string, range: LogRange = {}): Promise<SessionEvent[]> {
  return readLogChain(temporalSessionRuns(workflows, workflowId), range);
}
