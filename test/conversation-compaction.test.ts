import { describe, expect, it } from 'vitest';
import { CLEARABLE_RESULT_BYTES, SUMMARY_PREFIX, clearedResultLine, conversationOf, usageOf, withSummary } from '../contracts/conversation';
import { digestOf } from '../contracts/log-digest';
import { SessionLog, type NewSessionEvent, type SessionEvent } from '../contracts/session-log';
import { spendOf } from '../contracts/spend';
import { answering, logOf, turnEvents } from './support/tool-turns';

const turnEndOf = (events: readonly SessionEvent[], turn: number) => events.find((e) => e.type === 'turn/end' && e.turn === turn)!.seq;

describe('the conversation after a compaction', () => {
  const log = logOf([...turnEvents(1, 'one'), ...turnEvents(2, 'two'), { type: 'turn/start', turn: 3, text: 'question 3' }]);
  log.append({ type: 'context/compacted', turn: 3, throughSeq: turnEndOf(log.events, 2), summary: 'turns 1 and 2 read two files', tokensBefore: 900, tokensAfter: 100 }, 0);

  it('sends only what follows the cut, the summary in front of the first user message', () => {
    expect(conversationOf(log.events, 'anthropic')).toEqual([{ role: 'user', text: withSummary('turns 1 and 2 read two files', 'question 3') }]);
    expect(withSummary('S', 'T')).toBe(`${SUMMARY_PREFIX}S\n\nT`);
  });

  it('keeps every event in the log: only what is sent changes', () => {
    expect(log.events.filter((e) => e.type === 'turn/start').map((e) => e.turn)).toEqual([1, 2, 3]);
  });

  it('applies the last compaction when there are several', () => {
    const later = logOf(log.events.map(({ seq: _seq, at: _at, ...e }) => e as NewSessionEvent));
    later.append({ type: 'assistant', turn: 3, step: 1, message: answering('answer 3') }, 0);
    later.append({ type: 'turn/end', turn: 3, status: 'completed', reason: 'answered' }, 0);
    later.append({ type: 'turn/start', turn: 4, text: 'question 4' }, 0);
    later.append({ type: 'context/compacted', turn: 4, throughSeq: turnEndOf(later.events, 3), summary: 'turns 1 to 3', tokensBefore: 500, tokensAfter: 50 }, 0);
    later.append({ type: 'assistant', turn: 4, step: 1, message: answering('answer 4') }, 0);
    expect(conversationOf(later.events, 'anthropic')).toEqual([
      { role: 'user', text: withSummary('turns 1 to 3', 'question 4') },
      { role: 'assistant', text: 'answer 4', toolCalls: [] },
    ]);
  });

  it('is the same from the tail alone as from the whole log (what a continued run holds)', () => {
    const tail = log.events.filter((e) => e.seq > turnEndOf(log.events, 2));
    expect(conversationOf(new SessionLog(tail).events, 'anthropic')).toEqual(conversationOf(log.events, 'anthropic'));
  });

  it('counts the compaction call in usage and spend when it recorded its usage', () => {
    const withUsage = logOf(turnEvents(1, 'one'));
    const before = usageOf(withUsage.events).inputTokens;
    withUsage.append({ type: 'context/compacted', turn: 1, throughSeq: 9, summary: 's', tokensBefore: 1, tokensAfter: 1, usage: { inputTokens: 1000, outputTokens: 50 }, costUsd: 0.5 }, 0);
    expect(usageOf(withUsage.events).inputTokens).toBe(before + 1000);
    expect(spendOf(withUsage.events).outputTokens).toBe(2 + 3 + 50);
  });
});

describe('old tool results cleared from what is sent (clearToolResultsAfter)', () => {
  const big = 'x'.repeat(CLEARABLE_RESULT_BYTES + 1);
  const log = logOf([...turnEvents(1, big), ...turnEvents(2, 'small'), ...turnEvents(3, big), ...turnEvents(4, big)]);
  const results = (currentTurn: number, after?: number) =>
    conversationOf(log.events, 'anthropic', { currentTurn, ...(after === undefined ? {} : { clearToolResultsAfter: after }) }).flatMap((m) => (m.role === 'tool' ? [m.content] : []));

  it('replaces a result above 4 KiB of a turn more than N turns back with one line naming the tool, the call and the size', () => {
    expect(results(5, 2)).toEqual([clearedResultLine('read_file', 'call_1', CLEARABLE_RESULT_BYTES + 1), 'small', big, big]);
    expect(clearedResultLine('read_file', 'call_1', 5000)).toMatch(/5000-byte result of the read_file call call_1 .*Call read_file again/);
  });

  it('with -1 (a compaction asked again after it overflowed) clears every large result, the current turn\'s too', () => {
    const cleared = (id: string) => clearedResultLine('read_file', id, CLEARABLE_RESULT_BYTES + 1);
    expect(results(4, 0)).toEqual([cleared('call_1'), 'small', cleared('call_3'), big]);
    expect(results(4, -1)).toEqual([cleared('call_1'), 'small', cleared('call_3'), cleared('call_4')]);
  });

  it('keeps recent turns, small results, and everything when the setting is absent', () => {
    expect(results(5, 4)).toEqual([big, 'small', big, big]);
    expect(results(5)).toEqual([big, 'small', big, big]);
  });

  it('measures the size in UTF-8 bytes, not characters', () => {
    const accented = (chars: number) => logOf([...turnEvents(1, 'é'.repeat(chars)), ...turnEvents(2, 'x')]);
    const sent = (l: SessionLog) => conversationOf(l.events, 'anthropic', { currentTurn: 3, clearToolResultsAfter: 1 }).find((m) => m.role === 'tool')!;
    expect(sent(accented(2_000)).role === 'tool' && sent(accented(2_000)).content).toBe('é'.repeat(2_000));
    expect(sent(accented(2_100))).toMatchObject({ content: clearedResultLine('read_file', 'call_1', 4_200) });
  });

  it('never changes the log', () => {
    results(5, 1);
    expect(log.events.flatMap((e) => (e.type === 'tool/result' ? [e.content] : []))).toEqual([big, 'small', big, big]);
  });
});

describe('a log that spans runs (SessionLog seqs)', () => {
  const whole = logOf([...turnEvents(1, 'one'), ...turnEvents(2, 'two')]);
  const tail = whole.events.slice(10);

  it('keeps the seqs of the events it is given and appends after them', () => {
    const log = new SessionLog(tail);
    expect([log.firstSeq, log.nextSeq, log.length]).toEqual([10, 20, 10]);
    expect(log.append({ type: 'turn/start', turn: 3, text: 'q' }, 0).seq).toBe(20);
    expect(log.at(12)?.seq).toBe(12);
  });

  it('digests only the events it holds, and any prefix of them', () => {
    const log = new SessionLog(tail);
    expect(log.digest).toBe(digestOf(tail));
    expect(log.digestThrough(14)).toBe(digestOf(tail.slice(0, 5)));
  });

  it('starts at 0 when new, as every run recorded before did', () => {
    expect([new SessionLog().firstSeq, new SessionLog().nextSeq]).toEqual([0, 0]);
    expect(whole.firstSeq).toBe(0);
  });
});
