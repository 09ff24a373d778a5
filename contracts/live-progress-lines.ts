import type { Budget } from './budget';
import type { LimitWait } from './fleet-limits';
import { BUDGET_APPROVAL_ID } from './budget';
import type { SessionStatusUpdate } from './session-status-sinks';
import type { Spend } from './spend';

/**
 * The human lines of the live stream's progress frames, worded as `watch` words the same
 * moments (client/progress.ts, which takes its retry line from here), so a page and a
 * terminal read alike.
 */

/** `retrying in 12 s (attempt 3/11): overloaded`: `attempt` is the one that will run; no count when attempts are unlimited (0). */
export function retryingLine(p: { retryInMs: number; attempt: number; maxAttempts: number; failureType: string }): string {
  const of = p.maxAttempts > 0 ? `${p.attempt}/${p.maxAttempts}` : `${p.attempt}`;
  return `retrying in ${Math.max(0, Math.ceil(p.retryInMs / 1000))} s (attempt ${of}): ${p.failureType}`;
}

const WAITED_FOR: Record<LimitWait['reason'], string> = {
  provider_backoff: 'the provider to take requests again',
  concurrency: 'a free call slot',
  requests: 'the request budget',
  input_tokens: 'the token budget',
  output_tokens: 'the output token budget',
};

/** `waiting for the anthropic token budget, ~8 s`: a call held by the fleet limits (docs/fleet-limits.md), `etaMs` from `nowMs`. */
export function limitWaitLine(wait: LimitWait, nowMs: number): string {
  const left = Math.max(0, Math.ceil((wait.since + wait.etaMs - nowMs) / 1000));
  const what = WAITED_FOR[wait.reason];
  return `waiting for ${what.startsWith('the ') ? `the ${wait.provider} ${what.slice(4)}` : `${what} of ${wait.provider}`}, ~${left} s`;
}

/** `llm anthropic:claude-sonnet-4-5 · running (attempt 2/11)`; a first attempt says no count. */
export function llmStartedLine(p: { model: string; attempt: number; maxAttempts: number }): string {
  return `llm ${p.model} · running${p.attempt > 1 ? ` (attempt ${p.attempt}/${p.maxAttempts})` : ''}`;
}

/** `spent $0.2000 of $1.0000 · 200000 of 500000 tokens`, or `spent 1200 tokens` with no budget and no price. */
export function spendLine(spend: Pick<Spend, 'inputTokens' | 'outputTokens' | 'costUsd'>, budget: Budget): string {
  const tokens = spend.inputTokens + spend.outputTokens;
  const parts: string[] = [];
  if (spend.costUsd !== null || budget.usd !== undefined) parts.push(`${cost(spend.costUsd)}${budget.usd === undefined ? '' : ` of ${cost(budget.usd)}`}`);
  if (budget.tokens !== undefined) parts.push(`${tokens} of ${budget.tokens} tokens`);
  return `spent ${parts.length > 0 ? parts.join(' · ') : `${tokens} tokens`}`;
}

export function statusLine(update: SessionStatusUpdate): string {
  switch (update.kind) {
    case 'approval_waiting':
      return update.callId === BUDGET_APPROVAL_ID ? 'waiting for approval to go on past the budget' : `waiting for approval of ${update.toolName} #${update.callId}`;
    case 'approval_decided': {
      const what = update.callId === BUDGET_APPROVAL_ID ? 'going on past the budget' : `${update.toolName} #${update.callId}`;
      return `${what}: ${update.outcome === 'timed_out' ? 'nobody decided in time' : update.outcome}`;
    }
    case 'budget':
      return spendLine(update.spend, update.budget);
    case 'turn_idle':
      return `turn ${update.turn} ${update.status} · ${spendLine(update.spend, update.budget)}`;
  }
}

const cost = (usd: number | null) => (usd === null ? 'cost unknown' : `$${usd.toFixed(4)}`);
