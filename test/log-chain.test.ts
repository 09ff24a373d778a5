import { describe, expect, it } from 'vitest';
import { ConfigError } from '../config/config-error';
import { readForkStart, readForkTail, readLogChain, type SessionRun, type SessionRuns } from '../client/log-chain';
import type { SessionEvent } from '../contracts/session-log';

const turnStart = (seq: number, turn: number): SessionEvent => ({ type: 'turn/start', seq, at: 1_000 + seq, turn, text: `message ${turn}` });
const turnEnd = (seq: number, turn: number): SessionEvent => ({ type: 'turn/end', seq, at: 1_000 + seq, turn, status: 'completed', reason: 'answered' });
const compacted = (seq: number, turn: number, throughSeq: number): SessionEvent => ({
  type: 'context/compacted',
  seq,
  at: 1_000 + seq,
  turn,
  throughSeq,
  summary: `summary through ${throughSeq}`,
  tokensBefore: 6_000,
  tokensAfter: 900,
});

/**
 * A session of 20 events over three runs. Turns 1-5 (seqs 0-9), a compaction through
 * turn 3's end (seq 10), turns 6-7 (11-14), a compaction through turn 6's end (15),
 * turns 8-9 (16-19). Each run continued as new between turns and was given the events
 * after the last compaction's throughSeq, keeping their seqs.
 */
const LOG: SessionEvent[] = [
  ...[1, 2, 3, 4, 5].flatMap((turn) => [turnStart(2 * turn - 2, turn), turnEnd(2 * turn - 1, turn)]),
  compacted(10, 5, 5),
  turnStart(11, 6),
  turnEnd(12, 6),
  turnStart(13, 7),
  turnEnd(14, 7),
  compacted(15, 7, 12),
  turnStart(16, 8),
  turnEnd(17, 8),
  turnStart(18, 9),
  turnEnd(19, 9),
];

interface FakeRun {
  runId: string;
  continuedFromRunId?: string;
  events: SessionEvent[];
}

const THREE_RUNS: FakeRun[] = [
  { runId: 'run-1', events: LOG.slice(0, 11) },
  { runId: 'run-2', continuedFromRunId: 'run-1', events: LOG.slice(6, 16) },
  { runId: 'run-3', continuedFromRunId: 'run-2', events: LOG.slice(13, 20) },
];

/**
 * The runs as their Queries answer: `state` gives a run's first seq, its predecessor and its
 * next seq; `log` answers pages of three events from a seq, from the run's first event when
 * asked for one before it, as the workflow's logPage does. Every Query is recorded.
 */
function fakeRuns(runs: FakeRun[], pageSize = 3) {
  const asked: string[] = [];
  const find = (runId: string) => {
    const run = runs.find((r) => r.runId === runId);
    if (!run) throw new Error(`no run ${runId}`);
    return run;
  };
  const describe = (run: FakeRun): SessionRun => {
    const firstSeq = run.events[0]?.seq ?? 0;
    return { runId: run.runId, firstSeq, ...(run.continuedFromRunId ? { continuedFromRunId: run.continuedFromRunId } : {}), nextSeq: firstSeq + run.events.length };
  };
  const reader: SessionRuns = {
    async latest() {
      const run = runs.at(-1) as FakeRun;
      asked.push(`state ${run.runId}`);
      return describe(run);
    },
    async run(runId) {
      asked.push(`state ${runId}`);
      return describe(find(runId));
    },
    async page(runId, fromSeq) {
      asked.push(`log ${runId} ${fromSeq}`);
      const { events } = find(runId);
      const base = events[0]?.seq ?? 0;
      return events.slice(Math.max(0, fromSeq - base), Math.max(0, fromSeq - base) + pageSize);
    },
  };
  return { reader, asked, runsRead: () => [...new Set(asked.map((a) => a.split(' ')[1]))] };
}

const seqs = (events: SessionEvent[]) => events.map((e) => e.seq);
const range = (from: number, upto: number) => Array.from({ length: upto - from }, (_, i) => from + i);

describe('reading a session log across its runs', () => {
  it('gives every event once, in order, from the runs the session continued through', async () => {
    const { reader } = fakeRuns(THREE_RUNS);
    expect(await readLogChain(reader)).toEqual(LOG);
  });

  it('reads each event from the latest run that holds it: an earlier run only below its successor\'s first seq', async () => {
    const { reader, asked } = fakeRuns(THREE_RUNS);
    await readLogChain(reader);
    const pages = asked.filter((a) => a.startsWith('log')).map((a) => a.slice(4));
    expect(pages).toEqual(['run-1 0', 'run-1 3', 'run-2 6', 'run-2 9', 'run-2 12', 'run-3 13', 'run-3 16', 'run-3 19', 'run-3 20']);
  });

  it('does not query the earlier runs when the seqs wanted are all in the latest', async () => {
    const { reader, runsRead } = fakeRuns(THREE_RUNS);
    expect(seqs(await readLogChain(reader, { fromSeq: 14 }))).toEqual(range(14, 20));
    expect(runsRead()).toEqual(['run-3']);
  });

  it('goes back only as far as the first seq wanted, and stops at uptoSeq', async () => {
    const { reader, runsRead } = fakeRuns(THREE_RUNS);
    expect(seqs(await readLogChain(reader, { fromSeq: 7, uptoSeq: 15 }))).toEqual(range(7, 15));
    expect(runsRead()).toEqual(['run-3', 'run-2']);
  });

  it('reads a session of one run, and a session from before the log spanned runs (every run from seq 0), from the latest run alone', async () => {
    const one = fakeRuns([{ runId: 'only', events: LOG }]);
    expect(await readLogChain(one.reader)).toEqual(LOG);
    const old = fakeRuns([
      { runId: 'old-1', events: LOG.slice(0, 9) },
      { runId: 'old-2', continuedFromRunId: 'old-1', events: LOG },
    ]);
    expect(await readLogChain(old.reader)).toEqual(LOG);
    expect(old.runsRead()).toEqual(['old-2']);
  });

  it('refuses a chain with a hole rather than present a log that lacks events', async () => {
    const { reader } = fakeRuns([
      { runId: 'run-1', events: LOG.slice(0, 5) },
      { runId: 'run-2', continuedFromRunId: 'run-1', events: LOG.slice(6, 20) },
    ]);
    await expect(readLogChain(reader)).rejects.toThrow('the session log skips from seq 4 to 6');
  });
});

describe('what a fork at an event carries', () => {
  it('from a cut after a compaction in the latest run: the events after its throughSeq, that compaction included, read from the latest run alone', async () => {
    const { reader, runsRead } = fakeRuns(THREE_RUNS);
    const kept = await readForkTail(reader, 18);
    expect(seqs(kept)).toEqual(range(13, 19));
    expect(kept.find((e) => e.type === 'context/compacted')).toMatchObject({ seq: 15, throughSeq: 12 });
    expect(runsRead()).toEqual(['run-3']);
  });

  it('from a cut before the compaction a run was given: goes back to the run that holds the compaction before the cut', async () => {
    const { reader, runsRead } = fakeRuns(THREE_RUNS);
    expect(seqs(await readForkTail(reader, 14))).toEqual(range(6, 15));
    expect(runsRead()).toEqual(['run-3', 'run-2']);
  });

  it('at the compaction event itself: that compaction applies', async () => {
    const { reader } = fakeRuns(THREE_RUNS);
    expect(seqs(await readForkTail(reader, 10))).toEqual(range(6, 11));
  });

  it('from a cut before any compaction: the whole log up to the cut, from seq 0, across runs', async () => {
    const { reader, runsRead } = fakeRuns(THREE_RUNS);
    expect(await readForkTail(reader, 8)).toEqual(LOG.slice(0, 9));
    expect(runsRead()).toEqual(['run-3', 'run-2', 'run-1']);
  });

  it('without a cut: the tail from the last compaction to the last event', async () => {
    const { reader } = fakeRuns(THREE_RUNS);
    expect(seqs(await readForkTail(reader))).toEqual(range(13, 20));
    expect(await readForkTail(fakeRuns([{ runId: 'new', events: [] }]).reader)).toEqual([]);
  });

  it('refuses a cut past the last event, or before the first event of a log that starts later (a fork of a fork), naming the range', async () => {
    const past = readForkTail(fakeRuns(THREE_RUNS).reader, 20);
    await expect(past).rejects.toBeInstanceOf(ConfigError);
    await expect(past).rejects.toThrow('--at 20 is past the end of the source log (its last event is 19)');
    const forkOfFork = fakeRuns([{ runId: 'fork', events: LOG.slice(13, 20) }]);
    await expect(readForkTail(forkOfFork.reader, 12)).rejects.toThrow('--at 12 is before the start of the source log (its first event is 13)');
    expect(seqs(await readForkTail(forkOfFork.reader, 16))).toEqual(range(13, 17));
  });
});

describe('the MCP tool list a fork is given', () => {
  const listed = (seq: number, turn: number, server: string): SessionEvent => ({
    type: 'tools/listed',
    seq,
    at: 1_000 + seq,
    turn,
    servers: [server],
    tools: [{ name: `mcp__${server}__read`, server, tool: 'read', description: 'Reads.', inputSchema: {}, lane: 'read_only', timeoutMs: 1_000 }],
  });
  /** Turn 1 lists the tools (seq 1); a compaction through turn 2 (seq 6); turn 3 (7-8); each run continued as new after a turn. */
  const log: SessionEvent[] = [turnStart(0, 1), listed(1, 1, 'fs'), turnEnd(2, 1), turnStart(3, 2), listed(4, 2, 'git'), turnEnd(5, 2), compacted(6, 2, 5), turnStart(7, 3), turnEnd(8, 3)];

  it('is the latest list at or before the cut when it falls before the tail, read from the run that holds the compaction', async () => {
    const { reader } = fakeRuns([{ runId: 'run-1', events: log }]);
    const start = await readForkStart(reader, 8, { toolList: true });
    expect(seqs(start.events)).toEqual([6, 7, 8]);
    expect(start.toolsListed).toMatchObject({ seq: 4, servers: ['git'] });
  });

  it('is looked for in the runs before the one that holds the compaction, only as far back as needed', async () => {
    // run-2 was given only the events from seq 6 on; the list is in run-1.
    const { reader, runsRead } = fakeRuns([
      { runId: 'run-1', events: log.slice(0, 6) },
      { runId: 'run-2', continuedFromRunId: 'run-1', events: log.slice(6) },
    ]);
    const start = await readForkStart(reader, undefined, { toolList: true });
    expect(seqs(start.events)).toEqual([6, 7, 8]);
    expect(start.toolsListed).toMatchObject({ seq: 4, servers: ['git'] });
    expect(runsRead()).toEqual(['run-2', 'run-1']);
  });

  it('is none when the tail holds a list, or when none is asked for (a source without MCP servers)', async () => {
    const withList = [...log, listed(9, 3, 'web')];
    expect((await readForkStart(fakeRuns([{ runId: 'run-1', events: withList }]).reader, 9, { toolList: true })).toolsListed).toBeUndefined();
    const { reader, runsRead } = fakeRuns([
      { runId: 'run-1', events: log.slice(0, 6) },
      { runId: 'run-2', continuedFromRunId: 'run-1', events: log.slice(6) },
    ]);
    expect(await readForkStart(reader)).toEqual({ events: log.slice(6) });
    expect(runsRead()).toEqual(['run-2']);
  });
});
