import { describe, expect, it } from 'vitest';
import { describeProgress } from '../client/progress';
import type { SessionState } from '../contracts/api';
import { NO_SPEND } from '../contracts/spend';

const running = (over: Partial<SessionState>): SessionState =>
  ({
    status: 'running',
    model: 'anthropic:claude-sonnet-4-5',
    turn: 1,
    step: 3,
    stepsTaken: 3,
    phase: 'llm',
    queued: 0,
    retryPolicy: 'default',
    pendingApprovals: [],
    events: 10,
    runs: 1,
    settings: { maxSteps: 50 },
    spend: NO_SPEND,
    budget: {},
    ...over,
  }) as SessionState;

describe('watch shows the spend', () => {
  it('against the budget, in USD and tokens', () => {
    const lines = describeProgress({ state: running({ spend: { ...NO_SPEND, inputTokens: 150_000, outputTokens: 50_000, costUsd: 0.2 }, budget: { usd: 1, tokens: 500_000 } }), activities: [] }, 0);
    expect(lines).toEqual(['turn 1 · step 3/50 · llm', 'turn 1 · step 3/50 · spent $0.2000 of $1.0000 · 200000 of 500000 tokens']);
  });

  it('without a budget, when the cost is known', () => {
    expect(describeProgress({ state: running({ spend: { ...NO_SPEND, costUsd: 0.0123 } }), activities: [] }, 0)).toContain('turn 1 · step 3/50 · spent $0.0123');
  });

  it('not at all, and without failing, for a session on a worker version from before spend was tracked', () => {
    const old = running({});
    delete (old as Partial<SessionState>).spend;
    delete (old as Partial<SessionState>).budget;
    expect(describeProgress({ state: old, activities: [] }, 0)).toEqual(['turn 1 · step 3/50 · llm']);
  });

  it('as unknown under a USD budget when a model has no price, and not at all without a budget', () => {
    expect(describeProgress({ state: running({ spend: { ...NO_SPEND, costUsd: null }, budget: { usd: 2 } }), activities: [] }, 0)).toContain('turn 1 · step 3/50 · spent cost unknown of $2.0000');
    expect(describeProgress({ state: running({ spend: { ...NO_SPEND, costUsd: null } }), activities: [] }, 0)).toEqual(['turn 1 · step 3/50 · llm']);
  });
});
