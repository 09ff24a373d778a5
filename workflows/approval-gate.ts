import { condition } from '@temporalio/workflow';
import type { ApprovalDecision, PendingApproval } from '../contracts/api';
import type { ToolCall } from '../contracts/messages';
import type { ToolOutcome } from '../contracts/tools/tool-outcome';

/**
 * Side-effecting calls that wait for a human. The wait is a workflow condition with a
 * timeout, so it survives worker restarts and shows in the UI as a timer. A decision is
 * applied once: a second approval of the same call changes nothing.
 */
export class ApprovalGate {
  readonly #pending = new Map<string, PendingApproval>();
  readonly #decisions = new Map<string, ApprovalDecision>();

  constructor(readonly timeoutMs: number) {}

  /** Resolves with the result to record instead of running the call, or undefined when it was approved. */
  async request(turn: number, step: number, call: ToolCall, summary = `step ${step} · approval ${call.name} #${call.id}`): Promise<ToolOutcome | undefined> {
    this.#pending.set(call.id, { turn, step, callId: call.id, name: call.name, input: call.input, deadline: Date.now() + this.timeoutMs });
    try {
      const decided = await condition(() => this.#decisions.has(call.id), this.timeoutMs, { summary });
      const decision = this.#decisions.get(call.id);
      if (!decided || !decision) {
        // A decision arriving after the deadline is answered "not applied".
        this.#decisions.set(call.id, { callId: call.id, approved: false, reason: 'timed out' });
        return { code: 'error', content: `The call was not run: no human approved it within ${this.timeoutMs / 1000} s.` };
      }
      if (decision.approved) return undefined;
      return { code: 'error', content: `The call was not run: a human denied it${decision.reason ? `: ${decision.reason}` : '.'}` };
    } finally {
      this.#pending.delete(call.id);
    }
  }

  /** For the Update's validator: a decision must name a call that waits, or waited. */
  assertKnown(callId: string): void {
    if (!this.#pending.has(callId) && !this.#decisions.has(callId)) throw new Error(`no tool call ${callId} is waiting for approval`);
  }

  decide(decision: ApprovalDecision): { applied: boolean } {
    if (this.#decisions.has(decision.callId)) return { applied: false };
    this.#decisions.set(decision.callId, decision);
    return { applied: true };
  }

  /**
   * Drops a spent decision so the same id can wait again: the budget's pause asks under
   * one id each time its soft limit is reached.
   */
  forget(callId: string): void {
    this.#decisions.delete(callId);
  }

  pending(): PendingApproval[] {
    return [...this.#pending.values()].filter((a) => !this.#decisions.has(a.callId));
  }
}
