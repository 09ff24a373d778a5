/** `watch` shows a running compaction as `compact`, not as the step's LLM call. */
import { describe, expect, it } from 'vitest';
import { describeProgress, type ActivityProgress } from '../client/progress';
import { runningState } from './support/running-state';

const state = runningState({ turn: 4, step: 1, stepsTaken: 9, phase: 'llm' });

const llmCall = (extra: Partial<ActivityProgress>): ActivityProgress => ({ activityType: 'callLlm', attempt: 1, maximumAttempts: 0, state: 'started', ...extra });

describe('progress of a compaction call', () => {
  it('shows compact before its first heartbeat, from the id it was scheduled with', () => {
    expect(describeProgress({ state, activities: [llmCall({ activityId: 'compact-31' })] }, 0)).toEqual(['turn 4 · step 1 · compact · running']);
  });

  it('shows compact from a heartbeat that says so, streaming its summary', () => {
    const heartbeat = { purpose: 'compact' as const, attempt: 1, bytes: 10, toolCalls: 0, textTail: 'The user asked', textChars: 14 };
    expect(describeProgress({ state, activities: [llmCall({ activityId: '7', heartbeat })] }, 0)).toEqual(['turn 4 · step 1 · compact · streaming (14 chars) …The user asked']);
  });

  it('shows a step call as the model', () => {
    expect(describeProgress({ state, activities: [llmCall({ activityId: '7' })] }, 0)).toEqual(['turn 4 · step 1 · llm anthropic:claude-sonnet-4-5 · running']);
  });
});

describe('progress of a session whose provider reports too few input tokens', () => {
  it('says so with both counts, and that compaction estimates from the request size', () => {
    const context = { implausibleUsage: { seq: 40, reportedInputTokens: 12, requestTokens: 41_200 } };
    expect(describeProgress({ state, activities: [llmCall({ activityId: '7' })], context }, 0)).toEqual([
      'turn 4 · step 1 · llm anthropic:claude-sonnet-4-5 · running',
      "turn 4 · step 1 · the provider reported 12 input tokens for a request of ~41200: compaction estimates from the request's size",
    ]);
  });

  it('says nothing of a plausible report, nor for a worker that does not answer the context Query', () => {
    expect(describeProgress({ state, activities: [], context: {} }, 0)).toEqual(['turn 4 · step 1 · llm']);
    expect(describeProgress({ state, activities: [] }, 0)).toEqual(['turn 4 · step 1 · llm']);
  });
});

describe('progress of a retried LLM call', () => {
  const retrying = llmCall({ activityId: '7', attempt: 2, maximumAttempts: 11, nextAttemptAt: 5_000, lastFailure: { type: 'overloaded', message: '529' } });

  it('counts attempts against the session\'s live policy, not the upper bound Temporal was given', () => {
    const policy = { maxRetries: 3, baseDelayMs: 1_000, maxDelayMs: 30_000, budgetMs: 240_000, maxServerWaitMs: 60_000 };
    expect(describeProgress({ state: { ...state, retryPolicy: policy }, activities: [retrying] }, 0)).toEqual(['turn 4 · step 1 · llm anthropic:claude-sonnet-4-5 · retrying in 5 s (attempt 2/4): overloaded']);
  });

  it('counts eleven attempts under the default ladder', () => {
    expect(describeProgress({ state, activities: [retrying] }, 0)).toEqual(['turn 4 · step 1 · llm anthropic:claude-sonnet-4-5 · retrying in 5 s (attempt 2/11): overloaded']);
  });
});
