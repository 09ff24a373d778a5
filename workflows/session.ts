import {
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { SessionInputSchema, describeIssues, type SessionConfig, type SessionInput, type SessionResult } from '../contracts/api';
import { ApprovalGate } from './approval-gate';
import { budgetOf } from '../contracts/budget';
import { BudgetGuard } from './budget-guard';
import { continueAsNew, historyIsLong, nextRunInput, recordCarriedToolList } from './continue-as-new';
import { jsonBytes } from '../contracts/log-pages';
import { WORKFLOW_ERROR_TYPES } from '../contracts/errors';
import type { LlmSettings } from '../contracts/llm-call';
import { logMirror } from './log-sink';
import { nextMove } from './next-move';
import { repairOpenTail } from './repair';
import { AgentModel } from '../contracts/search-attributes';
import { setSessionHandlers } from './session-handlers';
import { SessionLog } from '../contracts/session-log';
import { sessionRuntime } from './session-runtime';
import { SessionState, publishStatus } from './session-state';
import { toolDispatch } from './tool-dispatch';
import { TurnTraces } from './trace-spans';
import { runTurn } from './turn';
import { withTurnTimeout } from './turn-guards';
import { McpSessionTools } from './tools/mcp-session';
import { BUILTIN_TOOLS, toolSpecs } from '../contracts/tools/registry';

/**
 * An agent session: an append-only log, user messages in through the `send` Update, turns
 * run one at a time. It ends on `end` or after `idleTimeoutMs` without work, never while a
 * turn runs.
 */
export async function agentSession(input: SessionInput): Promise<SessionResult> {
  const config = parseInput(input);
  const { workflowId } = workflowInfo();
  const log = new SessionLog(config.continued?.events ?? config.fork?.events ?? []);
  repairOpenTail(log, Date.now());
  recordCarriedToolList(log, config, Date.now());
  const state = new SessionState(config, log.events);
  const enabledTools = config.tools ? BUILTIN_TOOLS.filter((t) => config.tools?.includes(t.name)) : BUILTIN_TOOLS;
  const settings = llmSettingsOf(config, workflowId, enabledTools);
  // A copy: sink calls leave the workflow when its activation ends, and the log may have
  // grown by then.
  logMirror.opened(settings, [...log.events]);
  const approvals = new ApprovalGate(config.approvalTimeoutMs);
  const budget = new BudgetGuard(config.continued?.budget ?? budgetOf(config), approvals);
  const mcpTools = new McpSessionTools(config.mcp ?? [], () => log.events, (event) => runtime.append(event));
  upsertSearchAttributes([{ key: AgentModel, value: config.model }]);
  publishStatus(state);
  const turnTraces = new TurnTraces();
  setSessionHandlers({ config, log, state, settings, approvals, budget, mcpTools, turnTraces });
  const tools = toolDispatch({ config, workflowId, enabledTools, mcpTools, events: () => log.events });
  const runtime = sessionRuntime({ config, workflowId, log, state, settings, approvals, budget, mcpTools }, tools);

  try {
    for (;;) {
      const move = await nextMove(state, config.idleTimeoutMs, () => historyIsLong(config));
      switch (move.kind) {
        case 'run-turn': {
          const { turn, text } = move.message;
          const scope = new CancellationScope();
          state.turnStarted(turn, scope);
          publishStatus(state);
          const outcome = await turnTraces.run(turn, () =>
            withTurnTimeout(config.turnTimeoutMs, scope, (stoppedBy) => runTurn({ ...runtime, stoppedBy }, turn, text, scope)),
          );
          state.turnEnded(outcome);
          publishStatus(state);
          break;
        }
        case 'continue-as-new': {
          const compacted = await runtime.compactBeforeContinuing(() => jsonBytes(nextRunInput(input, config, log.events, state, budget.budget)));
          // The compaction was a long wait: a message, an `end` or an open `send` that came
          // meanwhile would be lost by continuing now, so the next move is decided again.
          // A compaction that failed is not tried again before a turn has ended since (a new
          // cut), so this never loops on it.
          if (compacted || state.hasWork() || !allHandlersFinished()) break;
          return await continueAsNew(input, config, log.events, state, budget.budget);
        }
        case 'end':
          state.endRequested = true;
          publishStatus(state);
          await condition(allHandlersFinished);
          return { turns: state.turnsRun, stepsTaken: state.stepsTaken, endedBy: move.endedBy, usage: state.usage, spend: state.spend };
      }
    }
  } finally {
    // Ended, failed or continued as new: nothing will read this run's copy of the log.
    logMirror.closed();
  }
}

/** What every LLM call of the session sends besides its conversation. */
function llmSettingsOf(config: SessionConfig, workflowId: string, enabledTools: Parameters<typeof toolSpecs>[0]): LlmSettings {
  return {
    ...(config.system === undefined ? {} : { system: config.system }),
    tools: toolSpecs(enabledTools),
    maxTokens: config.maxTokens,
    reasoning: config.reasoning,
    // The session id keys OpenAI's prompt cache: every step of a session shares its prefix.
    ...(config.promptCache ? { promptCacheKey: workflowId } : {}),
  };
}

function parseInput(input: SessionInput): SessionConfig {
  const parsed = SessionInputSchema.safeParse(input);
  if (!parsed.success) {
    // Non-retryable: a workflow task retried forever on bad input helps nobody.
    throw ApplicationFailure.create({ type: WORKFLOW_ERROR_TYPES.invalidInput, message: `invalid session input: ${describeIssues(parsed.error)}`, nonRetryable: true });
  }
  return parsed.data;
}
