import { ActivityFailure, CancellationScope, CancelledFailure, isCancellation, patched } from '@temporalio/workflow';
import { LadderSoFarSchema, type LadderSoFar, type LlmCallInput } from '../contracts/llm-call';
import type { AssistantMessage } from '../contracts/messages';
import { rungMs, samePolicy, type SessionRetryPolicy } from '../contracts/retry-policy';

/**
 * A `setRetryPolicy` while an LLM call is pending cancels the call and schedules it again
 * with the new policy. Sessions that recorded such a change on 0.2.0 kept the call pending
 * (its activity asked the session for the policy), so the change is patched.
 */
export const POLICY_REACHES_PENDING_CALL = 'retry-policy-reaches-pending-call';

/** What one schedule of an LLM call was made with. */
interface Schedule {
  summary: string;
  activityId: string | undefined;
  call: LlmCallInput;
  /** 1 for the call's first schedule. */
  n: number;
  firstScheduledAt: number;
  /** Whether its caller schedules it again after a cancel for a new policy (see `call`). */
  reschedulable: boolean;
  scope: CancellationScope;
}

/** Starts one activity for a schedule of an LLM call, with its summary and id. */
export type StartLlmActivity = (call: LlmCallInput, options: { summary: string; activityId?: string }) => Promise<AssistantMessage>;

/**
 * The session's LLM calls on its ladder. The activity learns its policy only from its
 * input, so the workflow owns a change: when the policy in force changes while a call is
 * pending, the call is cancelled (an attempt streaming is cut, one waiting for its retry
 * is taken out of Temporal's wait) and its caller schedules it again (`again`) with the
 * new policy and the ladder it has spent, so its budget and its retry count go on from its
 * first failure. A call that ends before the cancel reaches it ends as it did.
 *
 * A caller gets the activity's own promise, never one wrapped around it, and learns of a
 * change only on its failure path: a session that changes no policy resolves each call
 * after exactly the microtasks it always did, so its commands and an Update answered in
 * the same workflow task keep their recorded order.
 */
export class LlmCallSchedules {
  readonly #policy: () => SessionRetryPolicy;
  readonly #start: StartLlmActivity;
  #pending: Schedule | undefined;
  /** The schedule this session cancelled for a new policy, until its caller schedules it again. */
  #cancelled: Schedule | undefined;

  constructor(policy: () => SessionRetryPolicy, start: StartLlmActivity) {
    this.#policy = policy;
    this.#start = start;
  }

  /**
   * Schedules an LLM call by the policy in force now. A caller that does not schedule its
   * call again (`reschedulable: false`) keeps it on that policy to its end.
   */
  call(summary: string, call: Omit<LlmCallInput, 'retryPolicy' | 'ladder'>, activityId?: string, reschedulable = true): Promise<AssistantMessage> {
    return this.#schedule({ summary, activityId, call: { ...call, retryPolicy: this.#policy() }, n: 1, firstScheduledAt: Date.now(), reschedulable });
  }

  /** `setRetryPolicy` changed the policy in force: a pending call that runs by other rules is cancelled, to be scheduled again. */
  policyChanged(): void {
    const pending = this.#pending;
    if (!pending?.reschedulable || samePolicy(pending.call.retryPolicy, this.#policy()) || !patched(POLICY_REACHES_PENDING_CALL)) return;
    this.#cancelled = pending;
    pending.scope.cancel();
  }

  /** Whether `error` is the end of a call this session cancelled for a new policy (and not of a cancelled turn). */
  cancelledForPolicy(error: unknown): boolean {
    return this.#cancelled !== undefined && isCancellation(error) && !CancellationScope.current().consideredCancelled;
  }

  /** The call `error` ended (see `cancelledForPolicy`), scheduled again by the policy in force, with the ladder it spent. */
  again(error: unknown): Promise<AssistantMessage> {
    const before = this.#cancelled;
    if (!before) throw new Error('no LLM call was cancelled for a new policy');
    this.#cancelled = undefined;
    const ladder = ladderAfterCancel(error, before.call.ladder, before.call.retryPolicy, before.firstScheduledAt);
    return this.#schedule({ ...before, call: { ...before.call, retryPolicy: this.#policy(), ladder }, n: before.n + 1 });
  }

  /** Awaits `call`, scheduling it again for every policy change that cancels it. */
  async answer(call: Promise<AssistantMessage>): Promise<AssistantMessage> {
    for (let pending = call; ; ) {
      try {
        return await pending;
      } catch (error) {
        if (!this.cancelledForPolicy(error)) throw error;
        pending = this.again(error);
      }
    }
  }

  #schedule(schedule: Omit<Schedule, 'scope'>): Promise<AssistantMessage> {
    const scope = new CallScope();
    // A schedule after the first shows in history and the UI by its summary, under an id of its own.
    const options = schedule.n === 1 ? { summary: schedule.summary, ...(schedule.activityId ? { activityId: schedule.activityId } : {}) } : { summary: `${schedule.summary} · retry policy changed`, ...(schedule.activityId ? { activityId: `${schedule.activityId}-${schedule.n}` } : {}) };
    const started = scope.run(() => this.#start(schedule.call, options));
    const pending = { ...schedule, scope };
    this.#pending = pending;
    this.#cancelled = undefined;
    const settled = () => {
      if (this.#pending === pending) this.#pending = undefined;
    };
    started.then(settled, settled);
    return started;
  }
}

/**
 * The scope of one schedule, there only so that the session can cancel that one activity.
 * `CancellationScope.run` calls its function inside an async function of its own, whose
 * promise the caller would also have to keep from rejecting unhandled: three promises per
 * LLM call that nothing awaits, each of which the SDK's promise hook gives a stack trace
 * (measured on 2026-12-02, bench/README.md). This one calls it as it is, so `run` returns
 * the activity's own promise, still started inside the scope.
 */
class CallScope extends CancellationScope {
  protected override runInContext<T>(fn: () => Promise<T>): Promise<T> {
    return fn();
  }
}

/**
 * The ladder the next schedule carries. The activity answers a cancel with what it spent
 * (the cancellation's details). When the call was waiting for its retry, Temporal answers
 * the cancel itself, and the activity's bookkeeping (its heartbeat details) stays behind:
 * then the attempt that put it in the wait is counted, the budget is measured from the
 * call's first schedule (no later than its first failure: it may stop early, never wait
 * past it), and the next request waits the whole rung it was waiting out, as that wait's
 * end is unknown here (a server-stated wait longer than the rung is not known either).
 */
function ladderAfterCancel(error: unknown, before: LadderSoFar | undefined, bookedBy: SessionRetryPolicy, firstScheduledAt: number): LadderSoFar {
  const details = error instanceof ActivityFailure && error.cause instanceof CancelledFailure ? error.cause.details[0] : undefined;
  const answered = LadderSoFarSchema.safeParse(details);
  if (answered.success) return answered.data;
  // An opted-out call never waits for a retry: Temporal cancelled it before it started.
  if (bookedBy === null) return before ?? { attempts: 0 };
  const attempts = (before?.attempts ?? 0) + 1;
  // Waits for the fleet limits of earlier schedules stay out of the budget; this schedule's are in the heartbeat left behind.
  const limitWaited = before?.limitWaitedMs === undefined ? {} : { limitWaitedMs: before.limitWaitedMs };
  return { attempts, firstFailureAt: before?.firstFailureAt ?? firstScheduledAt, waitMs: rungMs(attempts, bookedBy), ...limitWaited };
}
