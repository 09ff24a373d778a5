import { ApplicationFailure } from '@temporalio/workflow';
import type { ApprovalGate } from './approval-gate';
import { BUDGET_APPROVAL_ID, type Budget, type BudgetFailureDetails, type BudgetUpdate } from '../contracts/budget';
import { WORKFLOW_ERROR_TYPES } from '../contracts/errors';
import { tokensOf, type Spend } from '../contracts/spend';

/** Checks each LLM call against the session's budget and its spend so far, before the call is made. */
export class BudgetGuard {
  #budget: Budget;
  /** The soft limit was approved at this budget; a new budget asks again. */
  #warningApproved = false;

  constructor(
    budget: Budget,
    private readonly approvals: ApprovalGate,
    private readonly spend: () => Spend,
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
  async admit(turn: number, step: number): Promise<void> {
    this.#refuseOver(this.spend(), 1);
    const { warnAt } = this.#budget;
    if (warnAt === undefined || !this.#warningDue()) return;
    const percent = Math.round(warnAt * 100);
    const denied = await this.approvals.request(turn, step, { id: BUDGET_APPROVAL_ID, name: 'budget', input: { ...this.#budget } }, `budget ${percent} % · approval`);
    this.approvals.forget(BUDGET_APPROVAL_ID);
    if (denied) throw exceeded(`the session reached ${percent} % of its budget and ${denied.content.replace(/^The call was not run: /, '')}`, this.#details(this.spend(), warnAt));
    this.#warningApproved = true;
    // A budget lowered while the turn waited applies at once.
    this.#refuseOver(this.spend(), 1);
  }

  /**
   * As `admit`, without a promise when nothing waits (no warning to approve), so a step
   * awaits nothing for it (step.ts); then a refusal is thrown at once.
   */
  admitting(turn: number, step: number): Promise<void> | undefined {
    if (this.#warningDue()) return this.admit(turn, step);
    this.#refuseOver(this.spend(), 1);
    return undefined;
  }

  /** The warning share is passed and nobody has approved going on past it yet. */
  #warningDue(): boolean {
    const { warnAt } = this.#budget;
    return warnAt !== undefined && !this.#warningApproved && this.#over(this.spend(), warnAt);
  }

  /** No hard limit is reached: the next LLM call would be admitted without a refusal. */
  allows(): boolean {
    return !this.#over(this.spend(), 1);
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
