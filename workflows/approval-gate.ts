import { condition } from '@temporalio/workflow';
import type { ApprovalDecision, PendingApproval } from '../contracts/api';
import type { ToolCall } from '../contracts/messages';
import type { ToolOutcome } from '../contracts/tools/tool-outcome';
import { statusChanged } from './status-sink';

/**
 * Side-effecting calls that wait for a human. The wait is a workflow condition with a
 * timeout, so it survives worker restarts and shows in the UI as a timer. A decision is
 * applied once: a second approval of the same call changes nothing.
 *
 * Waits and decisions are keyed by the call's position (turn, step, call id): a provider's
 * id is unique only within one assistant message, so a later turn's call may reuse an
 * earlier one's and must still wait for its own decision.
 */
export class ApprovalGate {
  readonly #pending = new Map<string, PendingApproval>();
  readonly #decisions = new Map<string, ApprovalDecision>();

  /** `beforeWaiting`: called before a wait is told to the live stream (the session mirrors its log there first). */
  constructor(
    readonly timeoutMs: number,
    private readonly beforeWaiting: () => void = () => undefined,
  ) {}

  /** Resolves with the result to record instead of running the call, or undefined when it was approved. */
  async request(turn: number, step: number, call: ToolCall, summary = `step ${step} · approval ${call.name} #${call.id}`): Promise<ToolOutcome | undefined> {
    const key = JSON.stringify([turn, step, call.id]);
    this.#pending.set(key, { turn, step, callId: call.id, name: call.name, input: call.input, deadline: Date.now() + this.timeoutMs });
    this.beforeWaiting();
    const said = { turn, step, callId: call.id, toolName: call.name };
    statusChanged({ kind: 'approval_waiting', ...said });
    try {
      const decided = await condition(() => this.#decisions.has(key), this.timeoutMs, { summary });
      const decision = this.#decisions.get(key);
      if (!decided || !decision) {
        // A decision arriving after the deadline is answered "not applied".
        this.#decisions.set(key, { callId: call.id, approved: false, reason: 'timed out' });
        statusChanged({ kind: 'approval_decided', ...said, outcome: 'timed_out' });
        return { code: 'error', content: `The call was not run: no human approved it within ${this.timeoutMs / 1000} s.` };
      }
      statusChanged({ kind: 'approval_decided', ...said, outcome: decision.approved ? 'approved' : 'denied' });
      if (decision.approved) return undefined;
      return { code: 'error', content: `The call was not run: a human denied it${decision.reason ? `: ${decision.reason}` : '.'}` };
    } finally {
      this.#pending.delete(key);
    }
  }

  /** For the Update's validator: a decision must name a call that waits, or waited. */
  assertKnown(callId: string): void {
    const named = (entry: { callId: string }) => entry.callId === callId;
    if (![...this.#pending.values()].some(named) && ![...this.#decisions.values()].some(named)) throw new Error(`no tool call ${callId} is waiting for approval`);
  }

  /**
   * A decision names a call id, and applies to the call with that id that waits now (calls
   * wait one at a time). A call that waited before keeps its decision, so deciding it
   * again, or a decision for its id when no call with it waits, changes nothing.
   */
  decide(decision: ApprovalDecision): { applied: boolean } {
    const waiting = this.#undecided().find(([, approval]) => approval.callId === decision.callId);
    if (!waiting) return { applied: false };
    this.#decisions.set(waiting[0], decision);
    return { applied: true };
  }

  /**
   * Drops a spent decision so the same id can wait again: the budget's pause asks under
   * one id each time its soft limit is reached, which may be twice at one step (before a
   * compaction and before the step's own call).
   */
  forget(callId: string): void {
    for (const [key, decision] of this.#decisions) if (decision.callId === callId) this.#decisions.delete(key);
  }

  pending(): PendingApproval[] {
    return this.#undecided().map(([, approval]) => approval);
  }

  #undecided(): [string, PendingApproval][] {
    return [...this.#pending].filter(([key]) => !this.#decisions.has(key));
  }
}
