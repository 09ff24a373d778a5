import { ActivityFailure, ApplicationFailure, CancelledFailure, RetryState, TimeoutFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { knownWindow } from '../client/sessions';
import { conversationOf } from '../contracts/conversation';
import { sessionContextWindow } from '../contracts/model-windows';
import type { SessionEvent } from '../contracts/session-log';
import { fallbackFailure, modelChain, returnDue, takesFallback } from '../workflows/model-fallback';

/**
 * The decision "does this failure send the step to the next model", and when a session on a
 * fallback goes back to its first model: pure, so every case is one line. The sessions that
 * live by it are in test/model-fallback.test.ts.
 */

/** An LLM call's failure as the workflow sees it: the activity's ApplicationFailure inside Temporal's ActivityFailure. */
function llmFailure(type: string, stopReason = 'max_retries'): ActivityFailure {
  const cause = ApplicationFailure.create({ type, message: `${type} from the provider`, nonRetryable: true, details: [{ provider: 'anthropic', stopReason }] });
  return new ActivityFailure('activity failed', 'callLlm', '1', RetryState.NON_RETRYABLE_FAILURE, 'worker', cause);
}

function lostAttempt(timeoutType: 'HEARTBEAT' | 'START_TO_CLOSE'): ActivityFailure {
  return new ActivityFailure('activity timed out', 'callLlm', '1', RetryState.MAXIMUM_ATTEMPTS_REACHED, 'worker', new TimeoutFailure('timed out', undefined, timeoutType));
}

describe('which failures a fallback takes', () => {
  it.each(['overloaded', 'server_error', 'network_error', 'timeout'])('%s: the provider is at fault, the next model takes the step', (type) => {
    expect(takesFallback(type)).toBe(true);
    expect(fallbackFailure(llmFailure(type))).toEqual({ type, message: `callLlm: ${type} from the provider` });
  });

  it('takes the same failures when the ladder stopped early for the fallback (stop reason fallback)', () => {
    expect(fallbackFailure(llmFailure('overloaded', 'fallback'))).toMatchObject({ type: 'overloaded' });
  });

  it.each(['HEARTBEAT', 'START_TO_CLOSE'] as const)('a lost attempt (%s timeout) counts as the network failing', (timeoutType) => {
    expect(fallbackFailure(lostAttempt(timeoutType))?.type).toBe(timeoutType === 'HEARTBEAT' ? 'heartbeat_timeout' : 'start_to_close_timeout');
  });

  it.each(['auth_error', 'invalid_request', 'content_blocked', 'context_overflow', 'quota_exceeded', 'unknown', 'rate_limit'])('never on %s: the request or the account is at fault, or the fleet limits handle it', (type) => {
    expect(takesFallback(type)).toBe(false);
    expect(fallbackFailure(llmFailure(type))).toBeUndefined();
  });

  it('never on a cancel: the user or the turn time limit stopped the call, not the provider', () => {
    const cancelled = new ActivityFailure('cancelled', 'callLlm', '1', RetryState.CANCEL_REQUESTED, 'worker', new CancelledFailure('cancelled'));
    expect(fallbackFailure(cancelled)).toBeUndefined();
    expect(fallbackFailure(new CancelledFailure('the turn timed out'))).toBeUndefined();
  });

  it('never on a failure of the workflow itself (a budget refusal, a bug)', () => {
    expect(fallbackFailure(ApplicationFailure.create({ type: 'budget_exceeded', message: 'over budget', nonRetryable: true }))).toBeUndefined();
    expect(fallbackFailure(new Error('a bug'))).toBeUndefined();
  });
});

describe('the chain and the return to the first model', () => {
  it('tries the model, then each fallback in order', () => {
    expect(modelChain({ model: 'anthropic:a', fallbacks: ['openai:b', 'google:c'] })).toEqual(['anthropic:a', 'openai:b', 'google:c']);
    expect(modelChain({ model: 'anthropic:a' })).toEqual(['anthropic:a']);
  });

  it('on the first model there is nothing to return from', () => {
    expect(returnDue({ index: 0, since: 0 }, 1, undefined, 10_000)).toBe(false);
    expect(returnDue({ index: 0, since: 0 }, 3, 1_000, 10_000)).toBe(false);
  });

  it('without fallbackReturnAfterMs: back at the next turn, never within the turn that switched', () => {
    const switched = { index: 1, since: 5_000 };
    expect(returnDue(switched, 2, undefined, 1e12)).toBe(false);
    expect(returnDue(switched, 1, undefined, 5_001)).toBe(true);
  });

  it('with fallbackReturnAfterMs: back once that long has passed since the switch, at any step, and not before, even at a new turn', () => {
    const switched = { index: 2, since: 5_000 };
    expect(returnDue(switched, 1, 60_000, 64_999)).toBe(false);
    expect(returnDue(switched, 4, 60_000, 65_000)).toBe(true);
    expect(returnDue(switched, 1, 60_000, 65_000)).toBe(true);
  });
});

describe('the context window of a chain', () => {
  it('is the smallest known window of the model and its fallbacks: whichever model answers, the request fits', () => {
    expect(sessionContextWindow({ model: 'openai:gpt-4.1', fallbacks: ['google:gemini-2.5-pro', 'openai:gpt-4o'] })).toBe(128_000);
    expect(sessionContextWindow({ model: 'openai:gpt-4o', fallbacks: ['openai:gpt-4.1'] })).toBe(128_000);
  });

  it('leaves out a model without a known window, and knows none when no model of the chain has one', () => {
    expect(sessionContextWindow({ model: 'openai:local-llama', fallbacks: ['anthropic:claude-sonnet-4-5'] })).toBe(200_000);
    expect(sessionContextWindow({ model: 'openai:local-llama', fallbacks: ['openai:local-mistral'] })).toBeNull();
  });

  it("the session's own contextWindow wins", () => {
    expect(sessionContextWindow({ model: 'openai:gpt-4.1', fallbacks: ['openai:gpt-4o'], contextWindow: 500_000 })).toBe(500_000);
  });

  it('the client pins the same window in the input it starts a session with, from its own table', () => {
    expect(knownWindow({ model: 'openai:gpt-4.1', fallbacks: ['openai:gpt-4o'] }, undefined)).toEqual({ contextWindow: 128_000 });
    expect(knownWindow({ model: 'openai:gpt-4.1', fallbacks: ['openai:mine'] }, { 'openai:gpt-4.1': { contextWindow: 90_000, maxOutputTokens: 1_000 }, 'openai:mine': { contextWindow: 8_000, maxOutputTokens: 1_000 } })).toEqual({ contextWindow: 8_000 });
  });
});

describe('continuation data across a switch', () => {
  const thinking = { provider: 'anthropic' as const, thinking: [{ type: 'thinking' as const, thinking: 'the calculator will do', signature: 'sig-1' }] };
  const log: SessionEvent[] = [
    { type: 'turn/start', seq: 0, at: 0, turn: 1, text: 'what is 6*7?' },
    { type: 'step/start', seq: 1, at: 0, turn: 1, step: 1, model: 'anthropic:a' },
    { type: 'assistant', seq: 2, at: 0, turn: 1, step: 1, message: { role: 'assistant', text: '42', toolCalls: [], stopReason: 'end_turn', usage: { inputTokens: 1, outputTokens: 1 }, providerData: thinking } },
    { type: 'model/switched', seq: 3, at: 0, turn: 1, step: 2, from: 'anthropic:a', to: 'openai:b', why: 'fallback', failure: { type: 'overloaded', message: 'overloaded' } },
  ];
  const assistantOf = (provider: 'anthropic' | 'openai' | 'google') => conversationOf(log, provider).find((m) => m.role === 'assistant');

  it("a signed thinking block is never in another provider's conversation: it gets the plain answer", () => {
    expect(assistantOf('openai')).toEqual({ role: 'assistant', text: '42', toolCalls: [] });
    expect(assistantOf('google')).not.toHaveProperty('providerData');
  });

  it('the provider that wrote it gets it back, unchanged', () => {
    expect(assistantOf('anthropic')).toMatchObject({ providerData: thinking });
  });
});
