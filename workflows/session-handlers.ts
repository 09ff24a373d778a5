import { ApplicationFailure, condition, setHandler, workflowInfo } from '@temporalio/workflow';
import {
  ApprovalDecisionSchema,
  AwaitTurnSchema,
  RetryPolicyUpdateSchema,
  SendMessageSchema,
  awaitTurnUpdate,
  cancelTurnUpdate,
  decideApprovalUpdate,
  endUpdate,
  logQuery,
  parseOrThrow,
  refreshToolsUpdate,
  sendUpdate,
  setBudgetUpdate,
  setRetryPolicyUpdate,
  stateQuery,
  type TurnOutcome,
} from '../contracts/api';
import { BudgetUpdateSchema } from '../contracts/budget';
import { WORKFLOW_ERROR_TYPES } from '../contracts/errors';
import { llmSettingsQuery } from '../contracts/llm-call';
import { logPage, LOG_PAGE_BYTES } from '../contracts/log-pages';
import { sessionContextWindow } from '../contracts/model-windows';
import { settingsInForce } from '../contracts/session-settings';
import { subAgentSpendSignal, SubAgentSpendSchema } from '../contracts/sub-agents';
import { handedOffRefusal } from '../contracts/handoffs';
import type { Session } from './session-run';

/** Registers the session's Updates and Queries; each changes only the state it names, through its named transition. */
export function setSessionHandlers({ config, log, state, settings, approvals, budget, mcpTools, turnTraces, llmCalls }: Session): void {
  const awaitOutcome = async (turn: number): Promise<TurnOutcome> => {
    await condition(() => state.outcome(turn) !== undefined);
    const outcome = state.outcome(turn) as TurnOutcome;
    if (outcome.status !== 'completed') throw turnFailure(outcome);
    return outcome;
  };

  setHandler(
    sendUpdate,
    async (message) => {
      const turn = state.enqueue(message);
      turnTraces.requested(turn);
      return awaitOutcome(turn);
    },
    {
      validator: (message) => {
        parseOrThrow(SendMessageSchema, message, 'message');
        const handed = state.handedOffTo;
        if (handed) throw new Error(handedOffRefusal(handed.to));
        if (state.endRequested) throw new Error('the session is ending and accepts no more messages');
      },
    },
  );
  setHandler(awaitTurnUpdate, ({ turn }) => awaitOutcome(turn), {
    validator: (arg) => {
      const { turn } = parseOrThrow(AwaitTurnSchema, arg, 'turn');
      if (turn >= state.nextTurn) throw new Error(`no turn ${turn} in this session`);
      if (state.forgot(turn)) throw new Error(`turn ${turn} ended long ago, in an earlier run of this session; its outcome is in the log`);
    },
  });
  setHandler(
    cancelTurnUpdate,
    () => {
      const turn = state.cancelRunningTurn();
      return turn === undefined ? { cancelled: false } : { cancelled: true, turn };
    },
    { validator: (...args: unknown[]) => takesNoArgument('cancelTurn', args) },
  );
  setHandler(
    setRetryPolicyUpdate,
    (update) => {
      state.setRetryPolicy(parseOrThrow(RetryPolicyUpdateSchema, update, 'retry policy'));
      llmCalls.policyChanged();
      return state.livePolicy();
    },
    { validator: (update) => void parseOrThrow(RetryPolicyUpdateSchema, update, 'retry policy') },
  );
  setHandler(setBudgetUpdate, (update) => budget.set(parseOrThrow(BudgetUpdateSchema, update, 'budget')), {
    validator: (update) => void parseOrThrow(BudgetUpdateSchema, update, 'budget'),
  });
  setHandler(decideApprovalUpdate, (decision) => approvals.decide(decision), {
    validator: (decision) => approvals.assertKnown(parseOrThrow(ApprovalDecisionSchema, decision, 'approval decision').callId),
  });
  setHandler(
    endUpdate,
    () => state.requestEnd(),
    { validator: (...args: unknown[]) => takesNoArgument('end', args) },
  );
  setHandler(logQuery, (options) => logPage(log.events, options?.fromSeq ?? 0, Math.min(options?.maxBytes ?? LOG_PAGE_BYTES, LOG_PAGE_BYTES)));
  const { continuedFromExecutionRunId: continuedFromRunId } = workflowInfo();
  setHandler(stateQuery, () => ({
    status: state.status(),
    model: config.model,
    ...(state.model === config.model ? {} : { modelInForce: state.model }),
    ...(config.system === undefined ? {} : { system: config.system }),
    turn: state.runningTurn ?? state.nextTurn - 1,
    step: state.step,
    stepsTaken: state.stepsTaken,
    phase: state.phase,
    queued: state.queued,
    retryPolicy: state.retryPolicy,
    pendingApprovals: approvals.pending(),
    events: log.nextSeq,
    firstSeq: log.firstSeq,
    ...(continuedFromRunId === undefined ? {} : { continuedFromRunId }),
    runs: config.continued?.runs ?? 1,
    contextWindow: sessionContextWindow(config),
    compactAt: config.compactAt,
    ...(config.fork ? { forkedFrom: { workflowId: config.fork.fromWorkflowId, atSeq: config.fork.atSeq } } : {}),
    ...(config.agent ? { agent: config.agent } : {}),
    settings: settingsInForce(config),
    spend: state.spend,
    usage: state.usage,
    budget: budget.budget,
  }));
  setHandler(llmSettingsQuery, () => settings);
  // A running sub-agent's spend so far (workflows/sub-agents.ts): a signal cannot be refused,
  // so one that does not parse, or names no running call or another child, changes nothing.
  setHandler(subAgentSpendSignal, (signal) => {
    const parsed = SubAgentSpendSchema.safeParse(signal);
    if (parsed.success) state.childSpent(parsed.data.callId, parsed.data.workflowId, parsed.data.spend);
  });
  setHandler(refreshToolsUpdate, () => mcpTools.refresh(), {
    validator: (...args: unknown[]) => {
      takesNoArgument('refreshTools', args);
      // Custom tools and sub-agents are listed with the MCP tools, and refreshed with them.
      if (mcpTools.servers.length === 0 && (config.customTools ?? []).length === 0 && !mcpTools.agentsOffered) throw new Error('this session uses no MCP server (start it with --mcp NAME)');
    },
  });
}

/**
 * An Update without parameters refuses an argument instead of ignoring it: a caller who
 * sends `cancelTurn({ turn: 3 })` means a turn, and would otherwise cancel whichever runs.
 */
function takesNoArgument(update: string, args: unknown[]): void {
  if (args.length > 0) throw new Error(`${update} takes no argument`);
}

/** A turn that did not complete fails its `send` and `awaitTurn` Updates with its own failure. */
function turnFailure(outcome: TurnOutcome): ApplicationFailure {
  return ApplicationFailure.create({
    type: outcome.failure?.type ?? WORKFLOW_ERROR_TYPES.internal,
    message: `turn ${outcome.turn} ${outcome.status}: ${outcome.failure?.message ?? 'no reason recorded'}`,
    nonRetryable: true,
    details: [outcome],
  });
}
