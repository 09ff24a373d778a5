import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import type { IncomingHttpHeaders } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  acquireLeaseUpdate,
  LIMITER_WORKFLOW,
  limiterWorkflowId,
  releaseLeaseSignal,
  type AcquireAnswer,
  type AcquireRequest,
  type FleetLimit,
  type LimitWait,
  type ObservedLimits,
  type ReleaseSignal,
  type SessionPriority,
} from '../../contracts/fleet-limits';
import type { Usage } from '../../contracts/messages';
import type { ProviderId } from '../../contracts/model-ref';
import { LlmAbortError } from './abort-error';
import { LlmError } from './llm-error';
import { observedLimits } from './rate-limit-headers';

/** One attempt of one LLM call, as the limiter knows it. */
export interface FleetLeaseCall {
  /** The activity's client: the limiter is a workflow on the same namespace. */
  client: Client;
  /** The session's task queue: the limiter of its provider runs there, asked by every worker of it. */
  taskQueue: string;
  /** `${workflowId}/${runId}/${activityId}`: the same on every attempt, so a retry takes its lost predecessor's lease over. */
  holder: string;
  /** The activity's attempt: the limiter takes no stale word from an earlier one. */
  attempt: number;
  provider: ProviderId;
  /** The provider's model name, without `provider:`. */
  model: string;
  priority: SessionPriority;
  /** The activity's cancellation: it ends a wait, and the call leaves the queue. */
  signal: AbortSignal;
  /** The limiter queued the call: once per wait, at its start. */
  onWait: (wait: LimitWait) => void;
  /** The lease is granted, after a wait of `waitedMs` (0 when it was granted at once). */
  onGranted: (waitedMs: number) => void;
  /** A release that could not be sent: the limiter drops the lease after 10 minutes. */
  warn: (message: string) => void;
}

/** The limiter's estimate of a request's input, the scripted LLM's count too: one token per four characters of its body. */
export function estimatedInputTokens(body: string): number {
  return Math.max(1, Math.ceil(body.length / 4));
}

/**
 * The LLM activity's side of the fleet limits (docs/fleet-limits.md): it asks the
 * provider's limiter for a lease just before the request leaves, waits while it is
 * queued, and gives the lease back with what the call used and what the provider's
 * headers said. Made only for a call that a limit of the worker's applies to: a worker
 * without one asks nothing, so it spends no action and adds no latency.
 */
export class FleetLease {
  #lease: string | undefined;
  #observed: ObservedLimits | undefined;

  private constructor(
    private readonly call: FleetLeaseCall,
    /** All the worker's limits for the provider: the limiter holds calls to the newest set it was sent. */
    private readonly limits: FleetLimit[],
    /** Those that hold this call: the provider's entry and its model's. */
    private readonly holding: FleetLimit[],
  ) {}

  static of(limits: readonly FleetLimit[], call: FleetLeaseCall): FleetLease | undefined {
    const provider = limits.filter((l) => l.provider === call.provider);
    const holding = provider.filter((l) => l.model === undefined || l.model === call.model);
    return holding.length === 0 ? undefined : new FleetLease(call, provider, holding);
  }

  /**
   * Waits for a lease for a request of `body`, reserving at most `maxTokens` of output.
   * The first ask answers at once (granted, or queued: the wait is made visible before it
   * begins); then it waits for the grant, asking again when the limiter continues as new.
   * A cancel withdraws the call from the queue and throws `LlmAbortError`: no request leaves.
   */
  async acquire(body: string, maxTokens: number): Promise<void> {
    const { model, priority, holder, attempt } = this.call;
    const outputTokens = Math.min(maxTokens, ...this.holding.map((l) => l.outputReserve));
    const request: AcquireRequest = { holder, attempt, model, priority, inputTokens: estimatedInputTokens(body), outputTokens, limits: this.limits, wait: false };
    let since: number | undefined;
    try {
      for (;;) {
        const answer = await this.#askThroughBusy({ ...request, wait: since !== undefined });
        if (answer.granted) {
          this.#lease = answer.lease;
          this.call.onGranted(since === undefined ? 0 : Date.now() - since);
          return;
        }
        if (!('queued' in answer)) continue;
        if (since === undefined) {
          since = Date.now();
          this.call.onWait({ reason: answer.queued.reason, provider: this.call.provider, model, etaMs: answer.queued.etaMs, since });
        } else {
          // Queued again at once: the limiter holds only the first few waiting asks open.
          await pause(pollDelayMs(answer.queued.etaMs), this.call.signal);
        }
      }
    } catch (error) {
      // Whether or not it was queued yet: the limiter may have taken the ask before the cancel
      // (or the failure) cut it, and would grant a lease nobody uses.
      await this.#send({ holder, attempt });
      if (!this.call.signal.aborted) throw error;
      throw new LlmAbortError(this.call.provider, this.call.signal.reason);
    }
  }

  /** The response's headers, for the release: what the provider says of the account's buckets. */
  observe(headers: IncomingHttpHeaders): void {
    this.#observed = observedLimits(headers, Date.now());
  }

  /**
   * Gives the lease back, once: with the answer's usage (input including the cached parts,
   * and output), or after a failure, when the provider said to wait, with the time no
   * call of this model should be granted before. Awaited, so the activity does not end
   * before the limiter has it; nothing when no lease was granted.
   */
  async release(outcome: { usage: Usage } | { error: unknown }): Promise<void> {
    const lease = this.#lease;
    if (lease === undefined) return;
    this.#lease = undefined;
    const backoffUntil = 'error' in outcome ? providerBackoffUntil(outcome.error) : undefined;
    await this.#send({
      holder: this.call.holder,
      attempt: this.call.attempt,
      lease,
      ...('usage' in outcome ? { usage: { inputTokens: outcome.usage.inputTokens, outputTokens: outcome.usage.outputTokens } } : {}),
      ...(this.#observed ? { observed: this.#observed } : {}),
      ...(backoffUntil === undefined ? {} : { backoffUntil }),
    });
  }

  /**
   * An ask, again after a short pause while the limiter is too busy to take it: a workflow
   * takes only so many Updates at once (Temporal's `maxInFlightUpdates`, 10 by default), and
   * one refused for that, or aborted as the limiter continued as new, is no failure of the call.
   */
  async #askThroughBusy(request: AcquireRequest): Promise<AcquireAnswer> {
    for (let tries = 1; ; tries++) {
      try {
        return await this.#ask(request);
      } catch (error) {
        if (this.call.signal.aborted || !isLimiterBusy(error)) throw error;
        await pause(Math.min(2_000, 50 * 2 ** Math.min(tries, 6)) * (0.5 + Math.random() / 2), this.call.signal);
      }
    }
  }

  /**
   * One ask; update-with-start every time, so a limiter that was ended is started again.
   * The client's wait for an Update's result does not end on an abort (it polls on), so
   * the ask is left behind on a cancel: the withdrawal that follows ends the waiting ask
   * in the limiter, which answers it `again` to no one.
   */
  #ask(request: AcquireRequest): Promise<AcquireAnswer> {
    const { client, taskQueue, provider, signal } = this.call;
    const asked = client.withAbortSignal(signal, () =>
      client.workflow.executeUpdateWithStart(acquireLeaseUpdate, {
        args: [request],
        startWorkflowOperation: new WithStartWorkflowOperation(LIMITER_WORKFLOW, {
          workflowId: limiterWorkflowId(taskQueue, provider),
          taskQueue,
          workflowIdConflictPolicy: 'USE_EXISTING',
          args: [],
        }),
      }),
    );
    const answer = untilAborted(asked, signal);
    return request.wait ? answer : withinFirstAnswerTime(answer, limiterWorkflowId(taskQueue, provider));
  }

  /** Not under the activity's signal: a cancelled call must still leave the queue. */
  async #send(release: ReleaseSignal): Promise<void> {
    const { client, taskQueue, provider } = this.call;
    try {
      await client.workflow.getHandle(limiterWorkflowId(taskQueue, provider)).signal(releaseLeaseSignal, release);
    } catch (error) {
      this.call.warn(`the fleet limiter of ${provider} did not take the release of ${release.holder}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

/**
 * How long a call the limiter did not hold open waits before it asks again: about its
 * estimate, within bounds. A grant waits for its caller's next ask, counting against the
 * limits meanwhile, so the bound is short.
 */
function pollDelayMs(etaMs: number): number {
  return Math.min(2_000, Math.max(250, etaMs));
}

const GRPC_RESOURCE_EXHAUSTED = 8;
const GRPC_UNAVAILABLE = 14;

/**
 * Temporal refused the ask for the limiter's load (too many Updates in flight, its workflow
 * task timed out and is being retried) or dropped it as the limiter continued as new.
 */
function isLimiterBusy(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (code === GRPC_RESOURCE_EXHAUSTED || code === GRPC_UNAVAILABLE) return true;
    if (/in-flight updates|update was aborted|workflow task in failed state/i.test(e.message)) return true;
  }
  return false;
}

/** Waits `ms`, or rejects (an AbortError) as soon as the signal aborts: the caller looks at the signal, not the error. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return sleep(ms, undefined, { signal });
}

/**
 * A first ask is answered at once, granted or queued. One that is not was taken by no
 * worker: the task queue's workers do not run the limiter (a workflows file of one's own
 * that does not export it), and the call would wait out its timeout in silence.
 */
export const FIRST_ANSWER_TIMEOUT_MS = 30_000;

function withinFirstAnswerTime<T>(answer: Promise<T>, workflowId: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the fleet limiter ${workflowId} did not answer in ${FIRST_ANSWER_TIMEOUT_MS / 1000} s: the task queue's workers must run the agentLimiter workflow (a workflows file of your own exports it beside agentSession, docs/fleet-limits.md)`)),
      FIRST_ANSWER_TIMEOUT_MS,
    );
  });
  return Promise.race([answer, late]).finally(() => clearTimeout(timer));
}

/** `promise`, or the signal's reason as soon as it aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** A 429 or 529 with a stated wait: the limiter holds every call of the model until then. */
function providerBackoffUntil(error: unknown): number | undefined {
  if (!LlmError.is(error) || error.retryAfterMs === undefined || (error.status !== 429 && error.status !== 529)) return undefined;
  return Date.now() + error.retryAfterMs;
}
