import { ActivityCancellationType, proxyActivities } from '@temporalio/workflow';
import { ContextCompactor, isContextOverflow, type CompactorCall } from './context-compactor';
import type { LlmActivities, LlmCallInput } from '../contracts/llm-call';
import { logMirror } from './log-sink';
import { temporalRetryPolicyFor } from '../contracts/retry-policy';
import type { NewSessionEvent, SessionEvent } from '../contracts/session-log';
import { callOf } from '../contracts/spend';
import type { TurnRuntime } from './turn';
import type { SessionParts } from './session-handlers';

const llm = proxyActivities<LlmActivities>({
  startToCloseTimeout: '10 minutes',
  // A lost worker is noticed within this; the activity heartbeats every few seconds even
  // while the provider is silent (see activities/llm/activity.ts).
  heartbeatTimeout: '20 seconds',
  // The workflow learns of a cancellation's outcome only when the activity has closed its
  // request, so nothing of a cancelled stream outlives the turn.
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

/** What a session's turns run on besides its tool policy. */
export interface RuntimeParts extends Omit<SessionParts, 'turnTraces'> {
  workflowId: string;
}

/**
 * The turns' runtime, and the compaction the session runs before it continues as new when
 * its tail is large. It answers whether it compacted: the session then decides its next
 * move again, since a message may have been sent while the compaction ran.
 */
export type SessionRuntime = TurnRuntime & { compactBeforeContinuing(carriedBytes: () => number): Promise<boolean> };

/** The session's side of a turn: its log and state, its budget, its LLM calls and approvals. */
export function sessionRuntime(
  { config, workflowId, log, state, settings, approvals, budget, mcpTools }: RuntimeParts,
  tools: Pick<TurnRuntime, 'prepare' | 'dispatchTool'>,
): SessionRuntime {
  // Mirrored in one sink call when an LLM call is scheduled, the only time the copy must be
  // current, rather than one call (and one copy of workflowInfo) per event.
  const unmirrored: SessionEvent[] = [];
  const append = (event: NewSessionEvent) => {
    // The status and step count go to visibility when a turn starts and ends, not here: a
    // write per step cost the server a visibility task each.
    if (event.type === 'step/start') state.stepStarted(event.step);
    const appended = log.append(event, Date.now());
    const call = callOf(appended);
    if (call) state.callMade(call);
    unmirrored.push(appended);
    return appended;
  };
  const callLlm = (summary: string, input: CompactorCall, activityId?: string) => {
    logMirror.appended(unmirrored.splice(0));
    const { clearToolResultsAfter } = config;
    // The session's setting, unless the call says otherwise (a compaction retried after an overflow clears more).
    const call: LlmCallInput = { sessionId: workflowId, model: config.model, retryPolicy: state.livePolicy(), ...(clearToolResultsAfter === undefined ? {} : { clearToolResultsAfter }), ...input };
    return llm.callLlm.executeWithOptions({ summary, retry: temporalRetryPolicyFor(state.livePolicy()), ...(activityId ? { activityId } : {}) }, [call]);
  };
  const compactor = new ContextCompactor({
    config,
    budget: { allows: () => budget.allows(state.spend), admit: (turn, step) => budget.admit(turn, step, () => state.spend) },
    log,
    frame: settings,
    append,
    callLlm,
  });
  const stepCall = (turn: number, step: number) => callLlm(`step ${step} · llm ${config.model}`, { turn, step, uptoSeq: log.nextSeq, logDigest: log.digest });
  return {
    model: config.model,
    maxSteps: config.maxSteps,
    toolConcurrency: config.toolConcurrency,
    append,
    setPhase: (phase, step) => {
      state.phase = phase;
      state.step = step;
    },
    admitLlmCall: (turn, step) => budget.admit(turn, step, () => state.spend),
    stoppedBy: () => undefined,
    // MCP tools are listed (once) before the first LLM call that could offer them, and
    // before a compaction, whose request offers them too.
    callLlm: (turn, step) =>
      mcpTools.whenListed(async () => {
        await compactor.beforeStep(turn, step);
        try {
          return await stepCall(turn, step);
        } catch (error) {
          // The provider's own count says the request is too long: compact, and try once more.
          if (!isContextOverflow(error) || !(await compactor.afterOverflow(turn, step))) throw error;
          return await stepCall(turn, step);
        }
      }),
    ...tools,
    awaitApproval: (turn, step, call) => approvals.request(turn, step, call),
    compactBeforeContinuing: (carriedBytes) => compactor.beforeContinuing(state.nextTurn - 1, state.step, carriedBytes),
  };
}
