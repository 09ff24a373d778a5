import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { decodeTimeoutType, type LoadedDataConverter } from '@temporalio/common';
// A CommonJS package: its namespaces are read from the default export under ESM.
import proto, { type google, type temporal } from '@temporalio/proto';
import { contextQuery, stateQuery, type ImplausibleUsage, type SessionState } from '../contracts/api';
import { TIMEOUT_ERROR_TYPES, WORKFLOW_ERROR_TYPES } from '../contracts/errors';
import type { LlmHeartbeat } from '../contracts/llm-call';
import { policyInForce } from '../contracts/retry-policy';
import { limitWaitLine, retryingLine } from '../contracts/live-progress-lines';
import { dim, formatCost } from './output';
import type { SessionHandle } from './sessions';

export interface ActivityProgress {
  activityType: string;
  /** The id the workflow scheduled it with: a compaction's names its cut (`compact-<throughSeq>`). */
  activityId?: string;
  /** 1-based attempt now running or next to run. */
  attempt: number;
  /** 0 when unlimited. */
  maximumAttempts: number;
  state: 'scheduled' | 'started' | 'cancel_requested' | 'other';
  lastFailure?: { type: string; message: string };
  /** Epoch ms of the next attempt, while Temporal waits out a backoff. */
  nextAttemptAt?: number;
  heartbeat?: Partial<LlmHeartbeat>;
}

export interface Progress {
  state: SessionState;
  activities: ActivityProgress[];
  /** The `context` Query's answer: absent from a session on a worker version from before it. */
  context?: { implausibleUsage?: ImplausibleUsage };
}

/**
 * A session's live progress: its own state by Query, what its compaction makes of the
 * provider's usage, and the pending activities from Temporal: attempt counts, the last
 * failure, the next attempt time and the heartbeat details (streamed text). All are safe
 * under replay: nothing here is written to history.
 */
export async function readProgress(client: Client, handle: SessionHandle, contextOf = contextOncePerStep(() => readContext(handle))): Promise<Progress> {
  const [state, description] = await Promise.all([handle.query(stateQuery), handle.describe()]);
  const [activities, context] = await Promise.all([pendingActivities(client, description), contextOf(state)]);
  return { state, activities, ...(context ? { context } : {}) };
}

/** The `context` Query, or nothing from a worker version that does not answer it. */
export function readContext(handle: SessionHandle): Promise<Progress['context']> {
  return handle.query(contextQuery).catch(() => undefined);
}

/**
 * `read` asked once per step rather than at every round of a poll: what the session says
 * of its context changes only when a step's call answers, and every Query is a billed
 * action on Temporal Cloud.
 */
export function contextOncePerStep(read: () => Promise<Progress['context']>): (state: Pick<SessionState, 'turn' | 'step'>) => Promise<Progress['context']> {
  let last: { at: string; answer: Progress['context'] } | undefined;
  return async ({ turn, step }) => {
    const at = `${turn}/${step}`;
    if (last?.at !== at) last = { at, answer: await read() };
    return last.answer;
  };
}

/** The pending activities of a described workflow, heartbeat details decoded. */
export async function pendingActivities(client: Client, description: WorkflowExecutionDescription): Promise<ActivityProgress[]> {
  const converter = client.options.loadedDataConverter;
  return Promise.all(
    (description.raw.pendingActivities ?? []).map(async (a): Promise<ActivityProgress> => {
      const heartbeat = a.heartbeatDetails?.payloads?.length ? await firstPayload<Partial<LlmHeartbeat>>(converter, a.heartbeatDetails.payloads).catch(() => undefined) : undefined;
      const nextAttemptAt = timestampMs(a.nextAttemptScheduleTime);
      const failure = a.lastFailure;
      return {
        activityType: a.activityType?.name ?? 'activity',
        ...(a.activityId ? { activityId: a.activityId } : {}),
        attempt: a.attempt ?? 1,
        maximumAttempts: a.maximumAttempts ?? 0,
        state: stateName(a.state),
        ...(failure
          ? { lastFailure: { type: lastFailureType(failure), message: failure.message ?? '' } }
          : {}),
        ...(nextAttemptAt === undefined ? {} : { nextAttemptAt }),
        ...(heartbeat ? { heartbeat } : {}),
      };
    }),
  );
}

/**
 * A pending activity's last failure under its catalogued type: what the activity raised,
 * or the kind of timeout Temporal gave it (`heartbeat_timeout`, not the provider's 408
 * `timeout`).
 */
export function lastFailureType(failure: temporal.api.failure.v1.IFailure): string {
  const raised = failure.applicationFailureInfo?.type;
  if (raised) return raised;
  const timeout = failure.timeoutFailureInfo ? decodeTimeoutType(failure.timeoutFailureInfo.timeoutType) : undefined;
  return timeout ? TIMEOUT_ERROR_TYPES[timeout] : WORKFLOW_ERROR_TYPES.internal;
}

const { PendingActivityState } = proto.temporal.api.enums.v1;

function stateName(state: temporal.api.enums.v1.PendingActivityState | null | undefined): ActivityProgress['state'] {
  switch (state) {
    case PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED:
      return 'scheduled';
    case PendingActivityState.PENDING_ACTIVITY_STATE_STARTED:
      return 'started';
    case PendingActivityState.PENDING_ACTIVITY_STATE_CANCEL_REQUESTED:
      return 'cancel_requested';
    default:
      return 'other';
  }
}

/**
 * The first of `payloads` as the client's converter reads it: through its codecs (the
 * encryption codec, when the session is encrypted) in reverse order, as they were applied.
 */
async function firstPayload<T>(converter: LoadedDataConverter, payloads: temporal.api.common.v1.IPayload[]): Promise<T> {
  let decoded = payloads;
  for (const codec of [...converter.payloadCodecs].reverse()) decoded = await codec.decode(decoded);
  return converter.payloadConverter.fromPayload<T>(decoded[0] as temporal.api.common.v1.IPayload);
}

/** A proto timestamp in epoch ms; its seconds arrive as a Long. */
function timestampMs(ts: google.protobuf.ITimestamp | null | undefined): number | undefined {
  if (!ts) return undefined;
  const seconds = typeof ts.seconds === 'number' ? ts.seconds : (ts.seconds?.toNumber() ?? 0);
  return seconds * 1000 + Math.floor((ts.nanos ?? 0) / 1_000_000);
}

/**
 * One line per thing in motion, e.g. `turn 1 · step 3/50 · llm … · retrying in 12 s (attempt 3/11): overloaded`;
 * the step is shown against the turn's `maxSteps`, so a turn nearing its limit is seen coming.
 */
export function describeProgress(progress: Progress, now: number): string[] {
  const { state } = progress;
  if (state.status !== 'running') return [`session ${state.status}`];
  const lines: string[] = [];
  // A session pinned to a worker version older than the `settings` field answers without it.
  const settings = state.settings as SessionState['settings'] | undefined;
  const where = `turn ${state.turn} · step ${state.step}${settings ? `/${settings.maxSteps}` : ''}`;
  for (const a of progress.activities) {
    const kind = a.activityType === 'callLlm' ? (isCompaction(a) ? 'compact' : `llm ${state.modelInForce ?? state.model}`) : a.activityType === 'runTool' || a.activityType === 'callMcpTool' ? 'tool' : a.activityType;
    const attempts = a.activityType === 'callLlm' ? llmAttempts(state.retryPolicy) : a.maximumAttempts;
    const of = attempts > 0 ? `${a.attempt}/${attempts}` : `${a.attempt}`;
    if (a.nextAttemptAt !== undefined && a.nextAttemptAt > now && a.lastFailure) {
      lines.push(`${where} · ${kind} · ${retryingLine({ retryInMs: a.nextAttemptAt - now, attempt: a.attempt, maxAttempts: attempts, failureType: a.lastFailure.type })}`);
    } else if (a.heartbeat?.waiting) {
      // Held by the fleet limits (docs/fleet-limits.md): no request has left yet.
      lines.push(`${where} · ${kind} · ${limitWaitLine(a.heartbeat.waiting, now)}`);
    } else if (a.heartbeat?.thinkingChars && !a.heartbeat.textChars) {
      // Thinking, dimmed: it is not the answer, and the answer has not started.
      const tail = (a.heartbeat.thinkingTail ?? '').replace(/\s+/g, ' ').slice(-60);
      lines.push(`${where} · ${kind} · ${dim(`thinking (${a.heartbeat.thinkingChars} chars) …${tail}`)}`);
    } else if (a.heartbeat?.textChars) {
      const tail = (a.heartbeat.textTail ?? '').replace(/\s+/g, ' ').slice(-60);
      lines.push(`${where} · ${kind} · streaming (${a.heartbeat.textChars} chars) …${tail}`);
    } else {
      lines.push(`${where} · ${kind} · ${a.state === 'cancel_requested' ? 'cancelling' : 'running'}${a.attempt > 1 ? ` (attempt ${of})` : ''}`);
    }
  }
  for (const approval of state.pendingApprovals) lines.push(`${where} · waiting for approval of ${approval.name} #${approval.callId}`);
  if (lines.length === 0) lines.push(`${where} · ${state.phase}`);
  const wrong = progress.context?.implausibleUsage;
  if (wrong) lines.push(`${where} · the provider reported ${wrong.reportedInputTokens} input tokens for a request of ~${wrong.requestTokens}: compaction estimates from the request's size`);
  const spent = spendLine(state);
  if (spent) lines.push(`${where} · ${spent}`);
  return lines;
}

/**
 * The attempts an LLM call has under the session's live policy. Temporal is always given
 * the policy's upper bound (so that a policy raised mid-call applies), and the activity
 * itself stops at the live one, which is what a person watching wants to read.
 */
function llmAttempts(policy: SessionState['retryPolicy']): number {
  return (policyInForce(policy)?.maxRetries ?? 0) + 1;
}

/**
 * A compaction call: its heartbeat says so, or, before its first heartbeat, the id it was
 * scheduled with (sessions recorded before either show it as an LLM call).
 */
function isCompaction(a: ActivityProgress): boolean {
  return a.heartbeat?.purpose === 'compact' || (a.activityId?.startsWith('compact-') ?? false);
}

/**
 * `spent $0.2000 of $1.0000 · 200000 of 500000 tokens`: what the session has spent, against
 * its budget when it has one. Nothing for a session with no budget whose cost is unknown
 * (a model without a price), where there is nothing to tell.
 */
function spendLine(state: SessionState): string | undefined {
  // A session on a worker version from before spend was tracked answers without it.
  const spend = state.spend as SessionState['spend'] | undefined;
  const budget = (state.budget as SessionState['budget'] | undefined) ?? {};
  if (!spend) return undefined;
  const tokens = spend.inputTokens + spend.outputTokens;
  const parts: string[] = [];
  if (spend.costUsd !== null || budget.usd !== undefined) parts.push(`${formatCost(spend.costUsd)}${budget.usd === undefined ? '' : ` of ${formatCost(budget.usd)}`}`);
  if (budget.tokens !== undefined) parts.push(`${tokens} of ${budget.tokens} tokens`);
  return parts.length > 0 ? `spent ${parts.join(' · ')}` : undefined;
}

/**
 * Prints progress lines as they change until `done` settles. Polling, because Temporal
 * has no push channel for pending-activity state; twice a second is cheap for one session.
 */
export async function followProgress(client: Client, handle: SessionHandle, done: Promise<unknown>, print: (line: string) => void, intervalMs = 500): Promise<void> {
  let finished = false;
  // Both ways: `done` is the caller's to handle; a rejection left on a derived promise here
  // would end the process with a stack trace instead of the caller's one line.
  const stop = () => {
    finished = true;
  };
  void done.then(stop, stop);
  let last = '';
  const contextOf = contextOncePerStep(() => readContext(handle));
  while (!finished) {
    const lines = await readProgress(client, handle, contextOf).then(
      (p) => describeProgress(p, Date.now()),
      () => [] as string[],
    );
    const text = lines.join('\n');
    if (text && text !== last && !finished) print(text);
    last = text;
    await Promise.race([done.catch(() => undefined), new Promise((r) => setTimeout(r, intervalMs))]);
  }
}
