import { z } from 'zod';

/**
 * A session's spending limits. Spend is known only after a call (its usage comes back
 * with the answer), so a limit is kept by refusing the next call once the spend has
 * reached it: the call that crosses it is the last one made.
 */
export const BudgetSchema = z
  .object({
    /** USD the session may spend, by the worker's price table. */
    usd: z.number({ error: 'must be a number of USD' }).positive({ error: 'must be more than 0 USD' }).max(1_000_000, { error: 'must be at most 1000000 USD' }).optional(),
    /** Tokens (input + output) the session may spend. */
    tokens: z.number({ error: 'must be a whole number of tokens' }).int({ error: 'must be a whole number of tokens' }).positive({ error: 'must be at least 1 token' }).max(1e12, { error: 'must be at most 1e12 tokens' }).optional(),
    /** The share of a limit at which the turn pauses for a human to approve going on. */
    warnAt: z.number({ error: 'must be a fraction between 0 and 1' }).gt(0, { error: 'must be more than 0' }).lt(1, { error: 'must be less than 1' }).optional(),
  })
  .strict();
export type Budget = z.infer<typeof BudgetSchema>;

/** `setBudget`: a field given sets its limit, `null` removes it, an absent one stays. */
export const BudgetUpdateSchema = z
  .object({ usd: BudgetSchema.shape.usd.unwrap().nullable().optional(), tokens: BudgetSchema.shape.tokens.unwrap().nullable().optional(), warnAt: BudgetSchema.shape.warnAt.unwrap().nullable().optional() })
  .strict();
export type BudgetUpdate = z.infer<typeof BudgetUpdateSchema>;

/** The budget a session's input sets, without the limits it leaves unset. */
export function budgetOf(input: { budgetUsd?: number; budgetTokens?: number; budgetWarn?: number }): Budget {
  return {
    ...(input.budgetUsd === undefined ? {} : { usd: input.budgetUsd }),
    ...(input.budgetTokens === undefined ? {} : { tokens: input.budgetTokens }),
    ...(input.budgetWarn === undefined ? {} : { warnAt: input.budgetWarn }),
  };
}

/** The call id the soft limit's pause waits under: `approve <id> budget`. */
export const BUDGET_APPROVAL_ID = 'budget';

export interface BudgetFailureDetails {
  limit: 'usd' | 'tokens';
  spent: number | null;
  allowed: number;
}
