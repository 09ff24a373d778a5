import { ActivityCancellationType, proxyActivities } from '@temporalio/workflow';
import type { ApprovalGate } from './approval-gate';
import type { BudgetGuard } from './budget';
import type { SessionConfig } from './api';
import type { LlmActivities } from './llm-call';
import { logMirror } from './log-sink';
import { temporalRetryPolicyFor } from './retry-policy';
import type { NewSessionEvent, SessionEvent, SessionLog } from './session-log';
import { publishStatus, type SessionState } from './session-state';
import { withCall } from './spend';
import type { TurnRuntime } from './turn';
import type { McpSessionTools } from './tools/mcp-session';

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
export interface RuntimeParts {
  config: SessionConfig;
  workflowId: string;
  log: SessionLog;
  state: SessionState;
  approvals: ApprovalGate;
  budget: BudgetGuard;
  mcpTools: McpSessionTools;
}

/** The session's side of a turn: its log and state, its budget, its LLM calls and approvals. */
export function sessionRuntime(
  { config, workflowId, log, state, approvals, budget, mcpTools }: RuntimeParts,
  tools: Pick<TurnRuntime, 'prepare' | 'dispatchTool'>,
): TurnRuntime {
  // Mirrored in one sink call when an LLM call is scheduled, the only time the copy must be
  // current, rather than one call (and one copy of workflowInfo) per event.
  const unmirrored: SessionEvent[] = [];
  return {
    model: config.model,
    maxSteps: config.maxSteps,
    toolConcurrency: config.toolConcurrency,
    append: (event: NewSessionEvent) => {
      if (event.type === 'step/start') {
        state.stepsTaken++;
        state.step = event.step;
        publishStatus(state);
      }
      if (event.type === 'assistant') state.spend = withCall(state.spend, event.message);
      const appended = log.append(event, Date.now());
      unmirrored.push(appended);
      return appended;
    },
    setPhase: (phase, step) => {
      state.phase = phase;
      state.step = step;
    },
    admitLlmCall: (turn, step) => budget.admit(turn, step, () => state.spend),
    stoppedBy: () => undefined,
    // MCP tools are listed (once) before the first LLM call that could offer them.
    callLlm: (turn, step) => mcpTools.whenListed(() => {
      logMirror.appended(unmirrored.splice(0));
      return llm.callLlm.executeWithOptions(
        { summary: `step ${step} · llm ${config.model}`, retry: temporalRetryPolicyFor(state.livePolicy()) },
        [{ sessionId: workflowId, turn, step, model: config.model, uptoSeq: log.nextSeq, logDigest: log.digest, retryPolicy: state.livePolicy() }],
      );
    }),
    ...tools,
    awaitApproval: (turn, step, call) => approvals.request(turn, step, call),
  };
}
