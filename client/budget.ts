import { setBudgetUpdate, stateQuery } from '../contracts/api';
import { BudgetUpdateSchema, type Budget, type BudgetUpdate } from '../contracts/budget';
import type { Spend } from '../contracts/spend';
import { ConfigError } from '../config/config-error';
import { formatCost } from './output';
import type { SessionHandle } from './sessions';

const LIMITS = { usd: '--usd', tokens: '--tokens', warnAt: '--warn' } as const;

/**
 * `budget <id> --usd 5 --tokens none`: a number sets a limit, `none` removes it, an
 * absent flag leaves it. Checked by the session's own schema, so a bad value is refused
 * here, naming the flag, before anything reaches the server.
 */
export function parseBudgetFlags(values: { usd?: string; tokens?: string; warn?: string }): BudgetUpdate {
  const update: Record<string, number | null> = {};
  const given = { usd: values.usd, tokens: values.tokens, warnAt: values.warn };
  for (const key of Object.keys(LIMITS) as (keyof typeof LIMITS)[]) {
    const text = given[key];
    if (text === undefined) continue;
    const value = text.trim() === 'none' ? null : text.trim() === '' ? Number.NaN : Number(text);
    const parsed = BudgetUpdateSchema.shape[key].safeParse(value);
    if (!parsed.success) throw new ConfigError(`${LIMITS[key]} ${parsed.error.issues[0]?.message ?? 'is invalid'} (or none), got ${JSON.stringify(text)}`);
    update[key] = value;
  }
  return update as BudgetUpdate;
}

/** Changes the session's budget live; the next LLM call, also of a running turn, is checked against it. */
export async function setBudget(handle: SessionHandle, update: BudgetUpdate): Promise<Budget> {
  return handle.executeUpdate(setBudgetUpdate, { args: [update] });
}

export async function budgetAndSpend(handle: SessionHandle): Promise<{ budget: Budget; spend: Spend }> {
  const { budget, spend } = await handle.query(stateQuery);
  return { budget, spend };
}

/** `$0.0120 of $5.0000 · 3400 of 100000 tokens · pause at 80 %`. */
export function describeBudget(budget: Budget, spend: Spend): string {
  const tokens = spend.inputTokens + spend.outputTokens;
  const usd = budget.usd === undefined ? `${formatCost(spend.costUsd)} (no USD limit)` : `${formatCost(spend.costUsd)} of ${formatCost(budget.usd)}`;
  const tokenPart = budget.tokens === undefined ? `${tokens} tokens (no token limit)` : `${tokens} of ${budget.tokens} tokens`;
  const warn = budget.warnAt === undefined ? '' : ` · pause at ${Math.round(budget.warnAt * 100)} %`;
  return `${usd} · ${tokenPart}${warn}`;
}
