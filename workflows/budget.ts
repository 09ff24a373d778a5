import { ApplicationFailure } from '@temporalio/workflow';
import { z } from 'zod';
import type { ApprovalGate } from './approval-gate';
import { WORKFLOW_ERROR_TYPES } from './errors';
import { tokensOf, type Spend } from './spend';

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

/** Checks each LLM call against the session's budget, before the call is made. */
export class BudgetGuard {
  #budget: Budget;
  /** The soft limit was approved at this budget; a new budget asks again. */
  #warningApproved = false;

  constructor(
    budget: Budget,
    private readonly approvals: ApprovalGate,
  ) {
    this.#budget = budget;
  }

  get budget(): Budget {
    return this.#budget;
  }

  set(update: BudgetUpdate): Budget {
    const next: Budget = { ...this.#budget };
    for (const key of ['usd', 'tokens', 'warnAt'] as const) {
      const value = update[key];
      if (value === null) delete next[key];
      else if (value !== undefined) next[key] = value;
    }
    this.#budget = next;
    this.#warningApproved = false;
    return next;
  }

  /**
   * Resolves when the next LLM call may be made. Throws `budget_exceeded` (never retried)
   * when a limit is reached, or when a human denies going on past the soft limit.
   */
  async admit(turn: number, step: number, spend: () => Spend): Promise<void> {
    this.#refuseOver(spend(), 1);
    const { warnAt } = this.#budget;
    if (warnAt === undefined || this.#warningApproved || !this.#over(spend(), warnAt)) return;
    const percent = Math.round(warnAt * 100);
    const denied = await this.approvals.request(turn, step, { id: BUDGET_APPROVAL_ID, name: 'budget', input: { ...this.#budget } }, `budget ${percent} % · approval`);
    this.approvals.forget(BUDGET_APPROVAL_ID);
    if (denied) throw exceeded(`the session reached ${percent} % of its budget and ${denied.content.replace(/^The call was not run: /, '')}`, this.#details(spend(), warnAt));
    this.#warningApproved = true;
    // A budget lowered while the turn waited applies at once.
    this.#refuseOver(spend(), 1);
  }

  /** No hard limit is reached: the next LLM call would be admitted without a refusal. */
  allows(spend: Spend): boolean {
    return !this.#over(spend, 1);
  }

  #over(spend: Spend, share: number): boolean {
    const { usd, tokens } = this.#budget;
    if (usd !== undefined && (spend.costUsd === null || spend.costUsd >= usd * share)) return true;
    return tokens !== undefined && tokensOf(spend) >= tokens * share;
  }

  #refuseOver(spend: Spend, share: number): void {
    if (!this.#over(spend, share)) return;
    const details = this.#details(spend, share);
    if (details.limit === 'usd' && details.spent === null) {
      throw exceeded(`the session's cost is unknown (a model without a price in the worker's table), so its ${usdText(details.allowed)} budget cannot be kept; add the model to AGENT_PRICES_FILE or remove --budget-usd`, details);
    }
    const spent = details.limit === 'usd' ? usdText(details.spent ?? 0) : `${details.spent} tokens`;
    const allowed = details.limit === 'usd' ? usdText(details.allowed) : `${details.allowed} tokens`;
    throw exceeded(`the session spent ${spent} of its ${allowed} budget; raise it (budget <id>) and send again`, details);
  }

  #details(spend: Spend, share: number): BudgetFailureDetails {
    const { usd, tokens } = this.#budget;
    if (usd !== undefined && (spend.costUsd === null || spend.costUsd >= usd * share)) return { limit: 'usd', spent: spend.costUsd, allowed: usd };
    return { limit: 'tokens', spent: tokensOf(spend), allowed: tokens ?? 0 };
  }
}

const usdText = (usd: number) => `$${usd.toFixed(4)}`;

function exceeded(message: string, details: BudgetFailureDetails): ApplicationFailure {
  return ApplicationFailure.create({ type: WORKFLOW_ERROR_TYPES.budgetExceeded, message, nonRetryable: true, details: [details] });
}
