import { ActivityCancellationType, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { SessionConfig, SessionInput, SessionResult } from '../contracts/api';
import { ApprovalGate } from './approval-gate';
import { budgetOf } from '../contracts/budget';
import { BudgetGuard } from './budget-guard';
import { ContextCompactor } from './context-compactor';
import { historyIsLong, nextRunInput, recordCarriedToolList, replayIsLong } from './continue-as-new';
import { IdleClock } from './idle-clock';
import type { LlmActivities, LlmCallInput, LlmSettings } from '../contracts/llm-call';
import { LlmCallSchedules } from './llm-call-schedules';
import { logMirror } from './log-sink';
import type { AssistantMessage } from '../contracts/messages';
import { repairOpenTail } from './repair';
import { temporalRetryPolicyFor } from '../contracts/retry-policy';
import { SESSION_LIMITS } from '../contracts/session-settings';
import { SessionLog, type NewSessionEvent, type SessionEvent } from '../contracts/session-log';
import { SessionState } from './session-state';
import { statusChanged } from './status-sink';
import { callOf, childSpendOf } from '../contracts/spend';
import { ToolDispatch } from './tool-dispatch';
import { TurnTraces } from './trace-spans';
import { CustomSessionTools } from './tools/custom-session';
import { McpSessionTools } from './tools/mcp-session';
import { BUILTIN_TOOLS, toolSpecs, type BuiltinTool } from '../contracts/tools/registry';

const llm = proxyActivities<LlmActivities>({
  startToCloseTimeout: '10 minutes',
  // A lost worker is noticed within this; the activity heartbeats every few seconds even
  // while the provider is silent (see activities/llm/activity.ts).
  heartbeatTimeout: '20 seconds',
  // The workflow learns of a cancellation's outcome only when the activity has closed its
  // request, so nothing of a cancelled stream outlives the turn.
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

/** What an LLM call is scheduled with besides the session's own settings; `clearToolResultsAfter` here wins over the session's. */
export type LlmCallRequest = Pick<LlmCallInput, 'turn' | 'step' | 'uptoSeq' | 'toolsUptoSeq' | 'logDigest' | 'purpose' | 'clearToolResultsAfter'>;

/**
 * One run of a session, built once when the run starts: its log and state, its budget and
 * approvals, its MCP tools, its tool policy and its compactor. It is the one writer of the
 * log (`append`) and the one caller of the LLM activity (`callLlm`). The loop
 * (session.ts), a turn (turn.ts) and a step (step.ts) are read against it.
 */
export class Session {
  readonly config: SessionConfig;
  readonly workflowId: string;
  readonly log: SessionLog;
  readonly state: SessionState;
  /** What every LLM call of the session sends besides its conversation. */
  readonly settings: LlmSettings;
  readonly approvals: ApprovalGate;
  readonly budget: BudgetGuard;
  readonly mcpTools: McpSessionTools;
  /** The custom tools it is offered, recorded with the MCP tools (workflows/tools/custom-session.ts). */
  readonly customTools: CustomSessionTools;
  readonly tools: ToolDispatch;
  readonly compactor: ContextCompactor;
  readonly turnTraces = new TurnTraces();
  /** The idle timeout's one timer across waits, from revision 2 on (./idle-clock.ts). */
  readonly idleClock = new IdleClock();
  /** The LLM calls on the session's ladder: `setRetryPolicy` reaches a pending one through them. */
  readonly llmCalls = new LlmCallSchedules(
    () => this.state.livePolicy(),
    (call, options) => llm.callLlm.executeWithOptions({ ...options, retry: temporalRetryPolicyFor(call.retryPolicy, call.ladder?.attempts) }, [call]),
  );
  /**
   * Mirrored in one sink call when an LLM call is scheduled, the only time the LLM
   * activity's copy must be current, and when something a live follower waits for is
   * appended (MIRRORED_AT_ONCE), which the worker publishes on the live stream; not one
   * call (and one copy of workflowInfo) per event.
   */
  readonly #unmirrored: SessionEvent[] = [];
  /** The input this run was started with, as the next run's is built from it. */
  readonly #input: SessionInput;

  constructor(input: SessionInput, config: SessionConfig) {
    this.#input = input;
    this.config = config;
    this.workflowId = workflowInfo().workflowId;
    this.log = new SessionLog(config.continued?.events ?? config.fork?.events ?? []);
    repairOpenTail(this.log, Date.now());
    recordCarriedToolList(this.log, config, Date.now());
    this.state = new SessionState(config, this.log.events);
    const enabledTools = config.tools ? BUILTIN_TOOLS.filter((t) => config.tools?.includes(t.name)) : BUILTIN_TOOLS;
    this.settings = llmSettingsOf(config, this.workflowId, enabledTools);
    // A copy: sink calls leave the workflow when its activation ends, and the log may have
    // grown by then.
    logMirror.opened(this.settings, [...this.log.events]);
    // What led to a call's wait is in the log a follower sees before the wait is said.
    this.approvals = new ApprovalGate(config.approvalTimeoutMs, () => this.mirrorLog());
    this.budget = new BudgetGuard(config.continued?.budget ?? budgetOf(config), this.approvals, () => this.state.spend);
    this.customTools = new CustomSessionTools(config.customTools ?? [], () => this.log.events);
    // A session handed a conversation lists its own tools in its first run, whatever it was carried (./handoff.ts).
    const handoffs = { handoffs: config.handoffs ?? [], mustList: config.handoff !== undefined && config.continued === undefined };
    this.mcpTools = new McpSessionTools(config.mcp ?? [], this.customTools, () => this.log.events, (event) => this.append(event), config.agents ?? [], handoffs);
    this.tools = new ToolDispatch(this, enabledTools);
    this.compactor = new ContextCompactor(this);
  }

  /** Appends to the log; a step's start is counted, and an LLM call's spend added. */
  append(event: NewSessionEvent): SessionEvent {
    if (event.type === 'step/start') this.state.stepStarted(event.step);
    const appended = this.log.append(event, Date.now());
    const call = callOf(appended);
    if (call) this.state.callMade(call);
    // A sub-agent's result brings its child's spend, in place of what the child signalled.
    else if (appended.type === 'tool/result') this.state.toolAnswered(appended.callId, childSpendOf(appended));
    this.#unmirrored.push(appended);
    if (MIRRORED_AT_ONCE.has(appended.type)) this.mirrorLog();
    // Copies: sink calls leave the workflow when its activation ends, and the spend may have grown by then.
    if (call) statusChanged({ kind: 'budget', turn: this.state.runningTurn ?? this.state.nextTurn - 1, step: this.state.step, spend: { ...this.state.spend }, budget: { ...this.budget.budget } });
    return appended;
  }

  /** The events appended since the last call, to the worker's copy (and its live stream). */
  mirrorLog(): void {
    logMirror.appended(this.#unmirrored.splice(0));
  }

  /**
   * Schedules an LLM call (a step's or a compaction's) on the session's ladder, with this
   * activity summary; `reschedulable` as `LlmCallSchedules.call` says. It goes to the model
   * in force (the first, or a fallback: workflows/model-fallback.ts).
   */
  callLlm(summary: string, request: LlmCallRequest, activityId?: string, reschedulable = true): Promise<AssistantMessage> {
    this.mirrorLog();
    const { clearToolResultsAfter, priority } = this.config;
    // Only a step's call with a model after it may stop its ladder early: a compaction does
    // not switch models (nothing would take its failure over), and a session without
    // fallbacks schedules its calls as it always did.
    const fallingBack = request.purpose !== 'compact' && this.state.nextModel() !== undefined;
    const call = {
      sessionId: this.workflowId,
      model: this.state.model,
      ...(fallingBack ? { fallbackAfterMs: this.config.fallbackAfterMs ?? SESSION_LIMITS.fallbackAfterMs.default } : {}),
      ...(clearToolResultsAfter === undefined ? {} : { clearToolResultsAfter }),
      // Only a batch session says so: an interactive one's calls are scheduled as they always were.
      ...(priority === 'batch' ? { priority } : {}),
      ...request,
    };
    return this.llmCalls.call(summary, call, activityId, reschedulable);
  }

  /** Temporal suggests continuing as new, or the session's own `continueAsNewAfterEvents` is reached. */
  historyIsLong(): boolean {
    return historyIsLong(this.config);
  }

  /** The run is long enough to continue as new for its replay's sake alone (./continue-as-new.ts). */
  replayIsLong(): boolean {
    return replayIsLong(this.config);
  }

  /** The input the next run would be started with now. */
  nextRunInput(): SessionInput {
    return nextRunInput(this.#input, this.config, this.log.events, this.state, this.budget.budget);
  }

  /** What the session answers when it ends. */
  result(endedBy: SessionResult['endedBy']): SessionResult {
    const { state } = this;
    const handed = state.handedOffTo;
    return { turns: state.turnsRun, stepsTaken: state.stepsTaken, endedBy, usage: state.usage, spend: state.spend, ...(handed ? { handedOffTo: { ...handed.to } } : {}) };
  }
}

/**
 * What a live follower waits for: the model's answer, a tool call starting and ending, a
 * step's and a turn's end. The rest (a turn's and a step's start, tool lists) is followed
 * in the same activation by one of these or by an LLM call, which mirror it too.
 */
const MIRRORED_AT_ONCE: ReadonlySet<SessionEvent['type']> = new Set(['assistant', 'tool/call', 'tool/result', 'step/end', 'turn/end', 'output/rejected', 'context/compacted']);

/** What every LLM call of the session sends besides its conversation. */
function llmSettingsOf(config: SessionConfig, workflowId: string, enabledTools: readonly BuiltinTool[]): LlmSettings {
  return {
    ...(config.system === undefined ? {} : { system: config.system }),
    tools: toolSpecs(enabledTools),
    maxTokens: config.maxTokens,
    reasoning: config.reasoning,
    // The session id keys OpenAI's prompt cache: every step of a session shares its prefix.
    ...(config.promptCache ? { promptCacheKey: workflowId } : {}),
  };
}
