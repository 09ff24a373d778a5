import { describe, expect, it } from 'vitest';
import { SessionInputSchema } from '../contracts/api';
import {
  cutPoint,
  estimateAfterCompaction,
  estimateRequestTokens,
  implausibleUsage,
  leavesNoRoomForAnswer,
  passesThreshold,
  requestSizeTokens,
  tailToCarry,
  tokensOfChars,
  toolListCutOff,
  type RequestFrame,
} from '../workflows/compaction';
import { conversationOf } from '../contracts/conversation';
import { MODEL_WINDOWS, ModelWindowsFileSchema, sessionContextWindow, windowOf } from '../contracts/model-windows';
import { SessionLog, type NewSessionEvent, type SessionEvent } from '../contracts/session-log';
import { SessionState } from '../workflows/session-state';
import { recordCarriedToolList } from '../workflows/continue-as-new';
import { latestMcpToolList } from '../contracts/tools/mcp-tools';
import { answering, calling, logOf, turnEvents } from './support/tool-turns';

const compacted = (turn: number, throughSeq: number): NewSessionEvent => ({ type: 'context/compacted', turn, throughSeq, summary: `through ${throughSeq}`, tokensBefore: 1000, tokensAfter: 100 });
const turnEndOf = (events: readonly SessionEvent[], turn: number) => events.find((e) => e.type === 'turn/end' && e.turn === turn)!.seq;
const frame: RequestFrame = { system: 'You are terse.', tools: [{ name: 'read_file', description: 'Reads a file', inputSchema: { type: 'object' } }] };

/** Every tool call at or before `seq` has its result at or before it too. */
function pairsClosedAt(events: readonly SessionEvent[], seq: number): boolean {
  const upTo = events.filter((e) => e.seq <= seq);
  const calls = upTo.flatMap((e) => (e.type === 'assistant' ? e.message.toolCalls.map((c) => c.id) : []));
  const results = new Set(upTo.flatMap((e) => (e.type === 'tool/result' ? [e.callId] : [])));
  return calls.every((id) => results.has(id));
}

describe('where a compaction may cut', () => {
  it('cuts at the turn/end of the last ended turn, with every call before it answered', () => {
    const log = logOf([...turnEvents(1), ...turnEvents(2)]);
    const cut = cutPoint(log.events);
    expect(cut).toBe(turnEndOf(log.events, 2));
    expect(pairsClosedAt(log.events, cut!)).toBe(true);
  });

  it('never cuts into the turn that is running, even between its tool call and its result', () => {
    const running = turnEvents(3).slice(0, 4); // turn/start, step/start, assistant, tool/call: the result is pending
    const log = logOf([...turnEvents(1), ...turnEvents(2), ...running]);
    const cut = cutPoint(log.events)!;
    expect(cut).toBe(turnEndOf(log.events, 2));
    expect(log.events.filter((e) => e.seq > cut).every((e) => e.turn === 3)).toBe(true);
    expect(pairsClosedAt(log.events, cut)).toBe(true);
  });

  it('has no cut while no turn has ended, or none has since the last compaction', () => {
    expect(cutPoint(logOf(turnEvents(1).slice(0, 5)).events)).toBeUndefined();
    const log = logOf([...turnEvents(1), ...turnEvents(2).slice(0, 2)]);
    log.append(compacted(2, turnEndOf(log.events, 1)), 0);
    expect(cutPoint(log.events)).toBeUndefined();
    turnEvents(2).slice(2).forEach((e) => log.append(e, 0));
    expect(cutPoint(log.events)).toBe(turnEndOf(log.events, 2));
  });

  it('finds the same cut in a run that holds only the tail', () => {
    const log = logOf([...turnEvents(1), ...turnEvents(2).slice(0, 2)]);
    log.append(compacted(2, turnEndOf(log.events, 1)), 0);
    turnEvents(2).slice(2).forEach((e) => log.append(e, 0));
    const next = new SessionLog(tailToCarry(log.events));
    expect(cutPoint(next.events)).toBe(cutPoint(log.events));
  });
});

describe('the estimate of the next request', () => {
  it('is the last call reported tokens (in and out) plus characters / 4 of the events since', () => {
    const log = logOf([...turnEvents(1), ...turnEvents(2).slice(0, 5)]);
    log.append({ type: 'assistant', turn: 2, step: 1, message: calling('call_x', { inputTokens: 5_000, outputTokens: 40 }) }, 0);
    const since: NewSessionEvent[] = [
      { type: 'tool/call', turn: 2, step: 1, callId: 'call_x', name: 'read_file', input: {} },
      { type: 'tool/result', turn: 2, step: 1, callId: 'call_x', name: 'read_file', code: 'ok', content: 'y'.repeat(4_000) },
    ];
    const appended = since.map((e) => log.append(e, 0));
    const chars = appended.reduce((n, e) => n + JSON.stringify(e).length, 0);
    expect(estimateRequestTokens(log.events, frame)).toBe(5_040 + Math.ceil(chars / 4));
  });

  it('estimates the whole request (system, tools, conversation sent) when no call came after the last compaction', () => {
    const log = logOf([...turnEvents(1), ...turnEvents(2).slice(0, 2)]);
    log.append(compacted(2, turnEndOf(log.events, 1)), 0);
    const sent = JSON.stringify(conversationOf(log.events, 'anthropic')).length;
    const tools = JSON.stringify(frame.tools).length;
    expect(estimateRequestTokens(log.events, frame, { provider: 'anthropic' })).toBe(tokensOfChars(frame.system!.length + tools + sent));
    expect(estimateRequestTokens(logOf([{ type: 'turn/start', turn: 1, text: 'hi' }]).events, frame)).toBeGreaterThan(0);
  });

  it('estimates less after a compaction than before it, for a log of large results', () => {
    const log = logOf([...turnEvents(1, 'z'.repeat(20_000)), ...turnEvents(2, 'z'.repeat(20_000)), ...turnEvents(3).slice(0, 2)]);
    const before = tokensOfChars(JSON.stringify(conversationOf(log.events)).length);
    const after = estimateAfterCompaction(log.events, cutPoint(log.events)!, 'a short summary', frame);
    expect(before).toBeGreaterThan(10_000);
    expect(after).toBeLessThan(500);
  });

  it('counts a request by its size alone as the whole-request estimate does: system, tools and conversation sent, characters / 4', () => {
    const log = logOf([...turnEvents(1, 'z'.repeat(20_000)), ...turnEvents(2).slice(0, 2)]);
    const sent = JSON.stringify(conversationOf(log.events, 'anthropic')).length;
    expect(requestSizeTokens(log.events, frame, { provider: 'anthropic' })).toBe(tokensOfChars(frame.system!.length + JSON.stringify(frame.tools).length + sent));
    // The provider's report (10 + 2 tokens for the last call) is what the estimate starts from.
    expect(estimateRequestTokens(log.events, frame)).toBeLessThan(requestSizeTokens(log.events, frame) / 10);
  });

  it('passes the threshold only with a known window and above compactAt of it', () => {
    expect(passesThreshold(7_501, 10_000, 0.75)).toBe(true);
    expect(passesThreshold(7_500, 10_000, 0.75)).toBe(false);
    expect(passesThreshold(1e9, null, 0.75)).toBe(false);
  });
});

describe('a reported usage that looks wrong', () => {
  const big = 'z'.repeat(20_000);
  /** Turn 1 read a large file; turn 2's first call reported `inputTokens` for the request that carried it. */
  const reporting = (inputTokens: number) => logOf([...turnEvents(1, big), ...turnEvents(2).slice(0, 2), { type: 'assistant', turn: 2, step: 1, message: answering('noted', { inputTokens, outputTokens: 3 }) }]);

  it('is a last call that reported under half the input tokens its request held by size, named with both counts', () => {
    const log = reporting(12);
    const requestTokens = requestSizeTokens(log.events.slice(0, -1), frame, { currentTurn: 2 });
    expect(requestTokens).toBeGreaterThan(5_000);
    expect(implausibleUsage(log.events, frame)).toEqual({ seq: log.events.at(-1)!.seq, reportedInputTokens: 12, requestTokens });
  });

  it('is not a report near the request size, nor one a tokenizer could make (half of it), nor a run without a call', () => {
    const requestTokens = requestSizeTokens(reporting(0).events.slice(0, -1), frame, { currentTurn: 2 });
    expect(implausibleUsage(reporting(requestTokens).events, frame)).toBeUndefined();
    expect(implausibleUsage(reporting(Math.ceil(requestTokens / 2)).events, frame)).toBeUndefined();
    expect(implausibleUsage(logOf([{ type: 'turn/start', turn: 1, text: 'hi' }]).events, frame)).toBeUndefined();
  });
});

describe('room for the answer', () => {
  it('is missing when the estimate plus the answer cap passes the window, below compactAt too', () => {
    expect(passesThreshold(5_000, 10_000, 0.75)).toBe(false);
    expect(leavesNoRoomForAnswer(5_000, 10_000, 6_000)).toBe(true);
    expect(leavesNoRoomForAnswer(4_000, 10_000, 6_000)).toBe(false);
  });

  it('is not judged for an unknown window, or a cap the window could never hold', () => {
    expect(leavesNoRoomForAnswer(5_000, null, 6_000)).toBe(false);
    expect(leavesNoRoomForAnswer(100, 8_000, 32_000)).toBe(false);
  });
});

describe('what continue-as-new carries', () => {
  const log = logOf([{ type: 'tools/listed', turn: 0, servers: ['fs'], tools: [] }, ...turnEvents(1), ...turnEvents(2), ...turnEvents(3).slice(0, 2)]);
  log.append(compacted(3, turnEndOf(log.events, 2)), 0);
  turnEvents(3).slice(2).forEach((e) => log.append(e, 0));

  it('is the events after the last compaction cut, seqs kept, the compaction among them', () => {
    const tail = tailToCarry(log.events);
    expect(tail[0]).toMatchObject({ type: 'turn/start', turn: 3, seq: turnEndOf(log.events, 2) + 1 });
    expect(tail.map((e) => e.seq)).toEqual(log.events.filter((e) => e.seq > turnEndOf(log.events, 2)).map((e) => e.seq));
    expect(tail.some((e) => e.type === 'context/compacted')).toBe(true);
  });

  it('is the whole log when nothing was compacted', () => {
    const whole = logOf(turnEvents(1));
    expect(tailToCarry(whole.events)).toEqual(whole.events);
  });

  it('names the MCP tool list the tail leaves out, and none when the tail has it', () => {
    expect(toolListCutOff(log.events, tailToCarry(log.events))).toMatchObject({ type: 'tools/listed', servers: ['fs'] });
    log.append({ type: 'tools/listed', turn: 3, servers: ['fs'], tools: [] }, 0);
    expect(toolListCutOff(log.events, tailToCarry(log.events))).toBeUndefined();
  });

  it('has the next run record the cut-off tool list again first, after the tail, so its MCP tools are still offered', () => {
    const tail = tailToCarry(log.events);
    const config = SessionInputSchema.parse({
      model: 'anthropic:m',
      continued: { events: tail, retryPolicy: 'default', turnsRun: 3, runs: 2, toolsListed: { turn: 0, servers: ['fs'], tools: [] } },
    });
    const next = new SessionLog(config.continued!.events);
    recordCarriedToolList(next, config, 0);
    expect(next.events.at(-1)).toMatchObject({ type: 'tools/listed', seq: tail.at(-1)!.seq + 1, servers: ['fs'] });
    expect(latestMcpToolList(next.events)).toEqual({ servers: ['fs'], tools: [] });
  });

  it('gives the next run the session counts, not counts of its tail', () => {
    const config = SessionInputSchema.parse({
      model: 'anthropic:m',
      continued: {
        events: tailToCarry(log.events),
        retryPolicy: 'default',
        turnsRun: 3,
        runs: 2,
        stepsTaken: 6,
        spend: { inputTokens: 90, outputTokens: 15, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: null },
        usage: { inputTokens: 90, outputTokens: 15 },
        nextTurn: 4,
        outcomes: [2, 3].map((turn) => ({ turn, status: 'completed', reason: 'answered' })),
      },
    });
    const state = new SessionState(config, new SessionLog(config.continued!.events).events);
    expect([state.stepsTaken, state.nextTurn, state.turnsRun, state.spend.inputTokens, state.usage.inputTokens]).toEqual([6, 4, 3, 90, 90]);
    expect([state.forgot(3), state.forgot(2), state.forgot(1)]).toEqual([false, false, true]);
    expect(new SessionState(SessionInputSchema.parse({ model: 'anthropic:m' }), logOf(turnEvents(1)).events).forgot(1)).toBe(false);
  });
});

describe('the model windows table', () => {
  it('knows a dated snapshot by its base name, and nothing merely alike', () => {
    expect(windowOf('anthropic:claude-sonnet-4-5-20250929')).toEqual(MODEL_WINDOWS['anthropic:claude-sonnet-4-5']);
    expect(windowOf('openai:gpt-5-pro')).toBeUndefined();
  });

  it('lets the session setting win over the table, and has no window for an unknown model', () => {
    expect(sessionContextWindow({ model: 'openai:gpt-4o', contextWindow: 8_000 })).toBe(8_000);
    expect(sessionContextWindow({ model: 'openai:gpt-4o' })).toBe(128_000);
    expect(sessionContextWindow({ model: 'openai:local-llama' })).toBeNull();
  });

  it('reads AGENT_MODELS_FILE entries and refuses a key that is not provider:model', () => {
    expect(ModelWindowsFileSchema.safeParse({ 'openai:local': { contextWindow: 32_000, maxOutputTokens: 4_000 } }).success).toBe(true);
    expect(ModelWindowsFileSchema.safeParse({ local: { contextWindow: 32_000, maxOutputTokens: 4_000 } }).success).toBe(false);
  });
});
