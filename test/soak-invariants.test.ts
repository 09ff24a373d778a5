/**
 * The soak's verdict is only as good as its checker: each invariant is shown to catch the
 * broken log it exists for, and to pass a sound one.
 */
import { describe, expect, it } from 'vitest';
import { duplicateSideEffects, sessionViolations, type SessionEvidence } from '../scripts/soak/invariants';
import type { AssistantMessage } from '../contracts/messages';
import { SessionLog, type NewSessionEvent } from '../contracts/session-log';

const asking = (...ids: string[]): AssistantMessage => ({
  role: 'assistant',
  text: '',
  toolCalls: ids.map((id) => ({ id, name: 'calculator', input: { expression: '1' } })),
  stopReason: ids.length > 0 ? 'tool_use' : 'end_turn',
  usage: { inputTokens: 1, outputTokens: 1 },
});

/** One turn of one step that asked for `a` and got its answer. */
const soundTurn: NewSessionEvent[] = [
  { type: 'turn/start', turn: 1, text: 'go' },
  { type: 'step/start', turn: 1, step: 1, model: 'anthropic:m' },
  { type: 'assistant', turn: 1, step: 1, message: asking('a') },
  { type: 'tool/call', turn: 1, step: 1, callId: 'a', name: 'calculator', input: {} },
  { type: 'tool/result', turn: 1, step: 1, callId: 'a', name: 'calculator', code: 'ok', content: '1' },
  { type: 'step/end', turn: 1, step: 1, status: 'completed' },
  { type: 'turn/end', turn: 1, status: 'completed', reason: 'answered' },
];

function evidence(events: NewSessionEvent[], overrides: Partial<SessionEvidence> = {}): SessionEvidence {
  const log = new SessionLog();
  events.forEach((e) => log.append(e, 0));
  return { workflowId: 'wf', sends: [{ outcome: { status: 'completed', turn: 1 } }], events: log.events, turnsInResult: 1, ...overrides };
}
const without = (type: string) => soundTurn.filter((e) => e.type !== type);

describe('the soak invariants', () => {
  it('find nothing wrong in a sound log', () => {
    expect(sessionViolations(evidence(soundTurn))).toEqual([]);
  });

  it.each([
    ['a message without a turn outcome', evidence(soundTurn, { sends: [{ error: 'timed out' }] }), /message 1 got no turn outcome: timed out/],
    ['a session that did not end cleanly', evidence(soundTurn, { resultError: 'terminated' }), /did not end cleanly: terminated/],
    ['a result that counts other turns than were sent', evidence(soundTurn, { turnsInResult: 2 }), /its result counts 2 turns for 1 messages/],
    ['an unreadable log', { workflowId: 'wf', sends: [], readError: 'gone' } satisfies SessionEvidence, /its log could not be read: gone/],
    ['a turn that never ended', evidence(without('turn/end')), /turn 1 has 0 turn\/end events/],
    ['a step that never ended', evidence(without('step/end')), /turn 1 step 1 has 0 step\/end events/],
    ['a tool call without a result', evidence(without('tool/result')), /tool call a has 0 results/],
    ['a tool call answered twice', evidence([...soundTurn.slice(0, 5), soundTurn[4]!, ...soundTurn.slice(5)]), /tool call a has 2 results/],
    ['a tool call dispatched twice', evidence([...soundTurn.slice(0, 4), soundTurn[3]!, ...soundTurn.slice(4)]), /tool call a was dispatched twice/],
    ['a result for a call nobody asked for', evidence([...soundTurn.slice(0, 5), { type: 'tool/result', turn: 1, step: 1, callId: 'z', name: 'calculator', code: 'ok', content: '' }, ...soundTurn.slice(5)]), /z is not a call the assistant asked for/],
    ['two assistant messages in one step', evidence([...soundTurn.slice(0, 3), { type: 'assistant', turn: 1, step: 1, message: asking() }, ...soundTurn.slice(3)]), /has 2 assistant messages/],
    ['a turn that ended otherwise than its caller was told', evidence(soundTurn, { sends: [{ outcome: { status: 'failed', turn: 1 } }] }), /turn 1 ended completed in the log but failed for its caller/],
    ['a turn missing from the log', evidence(soundTurn, { sends: [{ outcome: { status: 'completed', turn: 1 } }, { outcome: { status: 'completed', turn: 2 } }], turnsInResult: 2 }), /1 turns in the log for 2 messages/],
    ['a log that ends inside a turn', evidence(soundTurn.slice(0, 2)), /the log ends with step\/start, not with a closed turn/],
  ] satisfies [string, SessionEvidence, RegExp][])('catch %s', (_name, broken, message) => {
    expect(sessionViolations(broken).join('\n')).toMatch(message);
  });

  it('catch a gap in the sequence numbers', () => {
    const sound = evidence(soundTurn);
    const gapped = { ...sound, events: sound.events?.filter((e) => e.seq !== 3).map((e) => e) };
    expect(sessionViolations(gapped).join('\n')).toMatch(/event 3 has seq 4: the log has a gap or a duplicate/);
  });

  it('catch an Idempotency-Key that reached the target twice, and only that', () => {
    expect(duplicateSideEffects(['k1', undefined, 'k2', 'k1'])).toEqual(['Idempotency-Key k1 reached the target 2 times: a side-effecting call ran twice']);
    expect(duplicateSideEffects(['k1', 'k2', undefined])).toEqual([]);
  });
});
