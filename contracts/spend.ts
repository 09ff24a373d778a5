import { z } from 'zod';
import type { AssistantMessage, Usage } from './messages';
import type { SessionEvent } from './session-log';

const tokens = z.number().int().nonnegative();

/**
 * What a session has spent: the token totals of its LLM calls and their cost in USD.
 * `costUsd` is null as soon as one call's cost is unknown (a model without a price, or a
 * message recorded before calls were priced): a sum that left a call out would read as
 * less than was spent.
 */
export const SpendSchema = z.object({
  inputTokens: tokens,
  outputTokens: tokens,
  cacheReadTokens: tokens,
  cacheWriteTokens: tokens,
  reasoningTokens: tokens,
  costUsd: z.number().nonnegative().nullable(),
});
export type Spend = z.infer<typeof SpendSchema>;

export const NO_SPEND: Spend = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: 0 };

/** All tokens, in and out: what `--budget-tokens` counts. */
export const tokensOf = (spend: Pick<Spend, 'inputTokens' | 'outputTokens'>) => spend.inputTokens + spend.outputTokens;

/** `total` with one more LLM call's usage; a part the provider did not report counts 0. */
export function addUsage(total: Required<Usage>, u: Usage): Required<Usage> {
  return {
    inputTokens: total.inputTokens + u.inputTokens,
    outputTokens: total.outputTokens + u.outputTokens,
    cacheReadTokens: total.cacheReadTokens + (u.cacheReadTokens ?? 0),
    cacheWriteTokens: total.cacheWriteTokens + (u.cacheWriteTokens ?? 0),
    reasoningTokens: total.reasoningTokens + (u.reasoningTokens ?? 0),
  };
}

/** `spend` with one more LLM call's usage and cost. */
export function withCall(spend: Spend, message: Pick<AssistantMessage, 'usage' | 'costUsd'>): Spend {
  const cost = message.costUsd;
  return {
    ...addUsage(spend, message.usage),
    costUsd: spend.costUsd === null || cost === undefined || cost === null ? null : spend.costUsd + cost,
  };
}

/** `a` and `b` together; a cost unknown in either is unknown in the sum. */
export function addSpend(a: Spend, b: Spend): Spend {
  return {
    ...addUsage(a, b),
    costUsd: a.costUsd === null || b.costUsd === null ? null : a.costUsd + b.costUsd,
  };
}

/** Field by field, the larger of two figures of one child's spend; an unknown cost stays unknown. */
export function maxSpend(a: Spend, b: Spend): Spend {
  return {
    inputTokens: Math.max(a.inputTokens, b.inputTokens),
    outputTokens: Math.max(a.outputTokens, b.outputTokens),
    cacheReadTokens: Math.max(a.cacheReadTokens, b.cacheReadTokens),
    cacheWriteTokens: Math.max(a.cacheWriteTokens, b.cacheWriteTokens),
    reasoningTokens: Math.max(a.reasoningTokens, b.reasoningTokens),
    costUsd: a.costUsd === null || b.costUsd === null ? null : Math.max(a.costUsd, b.costUsd),
  };
}

export const sameSpend = (a: Spend, b: Spend) => (Object.keys(a) as (keyof Spend)[]).every((key) => a[key] === b[key]);

/**
 * The spend recorded in `events`, on top of `carried` (what a fork's source spent beyond
 * them): the session's LLM calls, and what its sub-agents spent (`tool/result.spend`).
 */
export function spendOf(events: readonly SessionEvent[], carried: Spend = NO_SPEND): Spend {
  return events.reduce((spend, e) => {
    const call = callOf(e);
    if (call) return withCall(spend, call);
    const child = childSpendOf(e);
    return child ? addSpend(spend, child) : spend;
  }, carried);
}

/** What a sub-agent's session spent, as its call's result records it; counted in spend, never in `usage` (the session's own calls). */
export function childSpendOf(e: SessionEvent): Spend | undefined {
  return e.type === 'tool/result' ? e.spend : undefined;
}

/** The LLM call an event records: a step's answer, or a compaction's (which records its usage beside the summary). */
export function callOf(e: SessionEvent): Pick<AssistantMessage, 'usage' | 'costUsd'> | undefined {
  if (e.type === 'assistant') return e.message;
  if (e.type === 'context/compacted' && e.usage) return { usage: e.usage, ...(e.costUsd === undefined ? {} : { costUsd: e.costUsd }) };
  return undefined;
}

/** What `whole` has beyond `part` (the spend of a cut of the same log): what a fork carries beside its events. */
export function spendBeyond(whole: Spend, part: Spend): Spend {
  return {
    inputTokens: whole.inputTokens - part.inputTokens,
    outputTokens: whole.outputTokens - part.outputTokens,
    cacheReadTokens: whole.cacheReadTokens - part.cacheReadTokens,
    cacheWriteTokens: whole.cacheWriteTokens - part.cacheWriteTokens,
    reasoningTokens: whole.reasoningTokens - part.reasoningTokens,
    costUsd: whole.costUsd === null || part.costUsd === null ? whole.costUsd : Math.max(0, whole.costUsd - part.costUsd),
  };
}
