/**
 * Fuzzer of the Idempotency-Key's encoding: the call id in it is whatever the provider's
 * stream said (any Unicode, any length), and the workflow id whatever the client chose.
 * Whatever they hold, two different call positions must never share a key, a position's
 * key must never equal a key of the legacy encoding (sessions recorded before the
 * position was part of it still send those), and every key is the same bounded HTTP token.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { idempotencyKey, positionIdempotencyKey, type CallPosition } from '../../contracts/tools/idempotency-key';
import { assertProperty } from '../support/fuzz';

const text = fc.string({ unit: 'grapheme', maxLength: 40 });
const position = fc.record({ turn: fc.integer({ min: 1, max: 10_000 }), step: fc.integer({ min: 1, max: 100 }), callId: text });
const sameId = (a: CallPosition, b: CallPosition) => a.turn === b.turn && a.step === b.step && a.callId === b.callId;

describe('the Idempotency-Key of a call position', () => {
  it('is pinned, so a code change cannot silently re-key calls in flight', () => {
    expect(positionIdempotencyKey('session-1', { turn: 2, step: 1, callId: 'toolu_01' })).toBe('agent-fcd24faa8f35df3f77b7f999f6e7ce75');
  });

  it('differs for the same call id in another turn or step, and from the key of the id alone', () => {
    const keys = new Set([
      positionIdempotencyKey('session-1', { turn: 1, step: 1, callId: 'toolu_01' }),
      positionIdempotencyKey('session-1', { turn: 2, step: 1, callId: 'toolu_01' }),
      positionIdempotencyKey('session-1', { turn: 1, step: 2, callId: 'toolu_01' }),
      positionIdempotencyKey('session-1', { turn: 11, step: 1, callId: 'toolu_01' }),
      positionIdempotencyKey('session-1', { turn: 1, step: 11, callId: 'toolu_01' }),
      idempotencyKey('session-1', 'toolu_01'),
    ]);
    expect(keys.size).toBe(6);
  });

  it('never gives two positions one key, never equals a legacy key, and is always a 38-character HTTP token', async () => {
    await assertProperty(
      1_000,
      fc.property(text, position, position, text, text, (workflowId, a, b, legacyWorkflowId, legacyCallId) => {
        const key = positionIdempotencyKey(workflowId, a);
        expect(key).toMatch(/^agent-[0-9a-f]{32}$/);
        expect(positionIdempotencyKey(workflowId, b) === key).toBe(sameId(a, b));
        expect(positionIdempotencyKey(`${workflowId}x`, a)).not.toBe(key);
        expect(idempotencyKey(legacyWorkflowId, legacyCallId)).not.toBe(key);
        // The legacy encoding with the position spelt into the call id is the likeliest clash.
        expect(idempotencyKey(workflowId, `${a.turn}:${a.step}:${a.callId}`)).not.toBe(key);
      }),
    );
  });
});
