import { describe, expect, it } from 'vitest';
import { PendingCallTracker } from '../workflows/compensation';
import { conversationOf } from '../contracts/conversation';
import type { AssistantMessage } from '../contracts/messages';
import { repairOpenTail } from '../workflows/repair';
import { SessionLog, type NewSessionEvent } from '../contracts/session-log';

const assistant: AssistantMessage = {
  role: 'assistant',
  text: '',
  toolCalls: [
    { id: 'a', name: 'calculator', input: { expression: '1' } },
    { id: 'b', name: 'http_request', input: { method: 'POST', url: 'http://x' } },
    { id: 'c', name: 'calculator', input: { expression: '3' } },
  ],
  stopReason: 'tool_use',
  usage: { inputTokens: 1, outputTokens: 1 },
};

function logOf(events: NewSessionEvent[]): SessionLog {
  const log = new SessionLog();
  events.forEach((e) => log.append(e, 0));
  return log;
}

const openStep: NewSessionEvent[] = [
  { type: 'turn/start', turn: 1, text: 'go' },
  { type: 'step/start', turn: 1, step: 1, model: 'anthropic:m' },
  { type: 'assistant', turn: 1, step: 1, message: assistant },
  { type: 'tool/call', turn: 1, step: 1, callId: 'a', name: 'calculator', input: {} },
  { type: 'tool/call', turn: 1, step: 1, callId: 'b', name: 'http_request', input: {} },
  { type: 'tool/result', turn: 1, step: 1, callId: 'a', name: 'calculator', code: 'ok', content: '1' },
];

describe('compensation results for unanswered calls', () => {
  it('keeps recorded results, gives a recorded call TOOL_OUTCOME_UNKNOWN and an unrecorded one TOOL_NOT_STARTED, in call order', () => {
    const tracker = new PendingCallTracker(assistant);
    logOf(openStep).events.forEach((e) => tracker.observe(e));
    expect(tracker.compensationResults().map((r) => [r.callId, r.code])).toEqual([
      ['b', 'TOOL_OUTCOME_UNKNOWN'],
      ['c', 'TOOL_NOT_STARTED'],
    ]);
  });

  it('warns against blindly retrying a call whose outcome is unknown', () => {
    const tracker = new PendingCallTracker(assistant);
    tracker.observe(logOf([{ type: 'tool/call', turn: 1, step: 1, callId: 'b', name: 'http_request', input: {} }]).events[0]!);
    expect(tracker.compensationResults().find((r) => r.callId === 'b')?.content).toMatch(/may or may not have run.*side effects.*Do not blindly retry/s);
  });
});

describe('crash-tail repair', () => {
  it('closes an open step with compensation results, then step/end and turn/end marked interrupted', () => {
    const log = logOf(openStep);
    repairOpenTail(log, 0);
    expect(log.events.slice(openStep.length).map((e) => [e.type, 'code' in e ? e.code : 'status' in e ? e.status : '', 'callId' in e ? e.callId : ''])).toEqual([
      ['tool/result', 'TOOL_OUTCOME_UNKNOWN', 'b'],
      ['tool/result', 'TOOL_NOT_STARTED', 'c'],
      ['step/end', 'interrupted', ''],
      ['turn/end', 'interrupted', ''],
    ]);
  });

  it('closes a step that never got its assistant message without inventing results', () => {
    const log = logOf(openStep.slice(0, 2));
    repairOpenTail(log, 0);
    expect(log.events.map((e) => e.type)).toEqual(['turn/start', 'step/start', 'step/end', 'turn/end']);
  });

  it('leaves a closed turn exactly as it is, even an inconsistent one', () => {
    const closed = [...openStep, { type: 'step/end', turn: 1, step: 1, status: 'failed' } as const, { type: 'turn/end', turn: 1, status: 'failed' } as const];
    const log = logOf(closed);
    repairOpenTail(log, 0);
    expect(log.length).toBe(closed.length);
  });
});

describe('the conversation derived from the log', () => {
  it('places each result right after its assistant message, in call order, and scopes call ids to their step', () => {
    const log = logOf([
      ...openStep,
      { type: 'tool/result', turn: 1, step: 1, callId: 'c', name: 'calculator', code: 'ok', content: '3' },
      { type: 'tool/result', turn: 1, step: 1, callId: 'b', name: 'http_request', code: 'ok', content: '201' },
      { type: 'step/end', turn: 1, step: 1, status: 'completed' },
      { type: 'step/start', turn: 1, step: 2, model: 'anthropic:m' },
      { type: 'assistant', turn: 1, step: 2, message: { ...assistant, toolCalls: [{ id: 'a', name: 'calculator', input: {} }] } },
      { type: 'tool/result', turn: 1, step: 2, callId: 'a', name: 'calculator', code: 'ok', content: 'again' },
    ]);
    const messages = conversationOf(log.events);
    expect(messages.map((m) => (m.role === 'tool' ? `${m.toolCallId}=${m.content}` : m.role))).toEqual(['user', 'assistant', 'a=1', 'b=201', 'c=3', 'assistant', 'a=again']);
  });
});
