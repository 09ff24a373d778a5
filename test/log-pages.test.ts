/**
 * The log is read in pages by seq. Seqs are the session's across runs, so a run that
 * continued as new holds events from its base (the first carried event's seq) on; every
 * position a reader passes is such a seq.
 */
import { describe, expect, it } from 'vitest';
import { jsonBytes, logPage, readLogPages } from '../contracts/log-pages';
import type { SessionEvent } from '../contracts/session-log';

/** `turns` question-and-answer turns whose first event has seq `base`. */
function runLog(base: number, turns: number): SessionEvent[] {
  const events: SessionEvent[] = [];
  for (let turn = 1; turn <= turns; turn++) {
    events.push({ type: 'turn/start', seq: base + events.length, at: 1_000 + turn, turn, text: `question ${turn}` });
    events.push({ type: 'turn/end', seq: base + events.length, at: 2_000 + turn, turn, status: 'completed', reason: 'answered' });
  }
  return events;
}

/** A session answering the log Query over `events`, `perPage` events at a time, counting what was asked. */
function pagedSession(events: readonly SessionEvent[], perPage: number) {
  const asked: number[] = [];
  const maxBytes = Math.max(...events.map(jsonBytes)) * perPage;
  const fetchPage = async (fromSeq: number) => {
    asked.push(fromSeq);
    return logPage(events, fromSeq, maxBytes);
  };
  return { fetchPage, asked };
}

const seqsOf = (events: readonly SessionEvent[]) => events.map((e) => e.seq);

describe('a page of the log', () => {
  const events = runLog(0, 5);

  it('starts at the event with the asked seq in a run that starts at 0', () => {
    expect(seqsOf(logPage(events, 3, 1024 * 1024))).toEqual([3, 4, 5, 6, 7, 8, 9]);
    expect(logPage(events, 10, 1024 * 1024)).toEqual([]);
  });

  it('holds as many events as fit in its bytes, and at least one', () => {
    const firstTwo = jsonBytes(events[0]) + jsonBytes(events[1]);
    expect(seqsOf(logPage(events, 0, firstTwo))).toEqual([0, 1]);
    expect(seqsOf(logPage(events, 4, 1))).toEqual([4]);
  });

  it('starts at the asked seq in a run whose log starts above 0', () => {
    const carried = runLog(40, 3);
    expect(seqsOf(logPage(carried, 43, 1024 * 1024))).toEqual([43, 44, 45]);
    expect(logPage(carried, 46, 1024 * 1024)).toEqual([]);
  });

  it('answers a seq below the run’s first event from that event on: the earlier ones are in the runs before it', () => {
    const carried = runLog(40, 3);
    expect(seqsOf(logPage(carried, 0, 1024 * 1024))).toEqual([40, 41, 42, 43, 44, 45]);
    expect(seqsOf(logPage(carried, 39, 1024 * 1024))).toEqual([40, 41, 42, 43, 44, 45]);
  });
});

describe('reading the log page by page', () => {
  it('reads a run that starts at 0 whole, each page from the seq after the last one read', async () => {
    const events = runLog(0, 4);
    const { fetchPage, asked } = pagedSession(events, 3);
    expect(await readLogPages(fetchPage)).toEqual(events);
    expect(asked).toEqual([0, 3, 6, 8]);
  });

  it('stops at uptoSeq, exclusive, without asking for a page past it', async () => {
    const events = runLog(0, 4);
    const { fetchPage, asked } = pagedSession(events, 3);
    expect(seqsOf(await readLogPages(fetchPage, 5))).toEqual([0, 1, 2, 3, 4]);
    expect(asked).toEqual([0, 3]);
  });

  it('reads a run whose log starts above 0 from its first event when asked from 0, and cuts at uptoSeq by seq', async () => {
    const events = runLog(40, 4);
    const { fetchPage, asked } = pagedSession(events, 3);
    expect(seqsOf(await readLogPages(fetchPage, 45))).toEqual([40, 41, 42, 43, 44]);
    expect(asked).toEqual([0, 43]);
  });

  it('reads from a seq inside a run whose log starts above 0, to the end', async () => {
    const events = runLog(40, 4);
    const { fetchPage, asked } = pagedSession(events, 3);
    expect(await readLogPages(fetchPage, Number.POSITIVE_INFINITY, 44)).toEqual(events.slice(4));
    expect(asked).toEqual([44, 47, 48]);
  });

  it('refuses a page that does not move forward, instead of asking for it forever', async () => {
    const events = runLog(0, 2);
    await expect(readLogPages(async () => events.slice(0, 1), 4, 2)).rejects.toThrow('the log page asked for from seq 2 ends at seq 0');
  });
});
