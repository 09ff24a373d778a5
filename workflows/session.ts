import {
  ActivityCancellationType,
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  makeContinueAsNewFunc,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import {
  SendMessageSchema,
  SessionInputSchema,
  describeIssues,
  parseOrThrow,
  ApprovalDecisionSchema,
  RetryPolicyUpdateSchema,
  awaitTurnUpdate,
  cancelTurnUpdate,
  decideApprovalUpdate,
  endUpdate,
  logQuery,
  refreshToolsUpdate,
  sendUpdate,
  setBudgetUpdate,
  setRetryPolicyUpdate,
  stateQuery,
  type SessionConfig,
  type SessionInput,
  type SessionResult,
  type SessionState,
  type TurnOutcome,
} from './api';
import { usageOf } from './conversation';
import { llmSettingsQuery, retryPolicyQuery, type LlmActivities, type LlmSettings } from './llm-call';
import { logMirror } from './log-sink';
import { jsonBytes, logPage, LOG_PAGE_BYTES } from './log-pages';
import type { ToolCall } from './messages';
import { DEFAULT_RETRY_POLICY, temporalRetryPolicyFor, type SessionRetryPolicy } from './retry-policy';
import type { ScheduledCall } from './scheduler';
import { AgentCostUsd, AgentModel, AgentStatus, AgentStepCount } from './search-attributes';
import { BudgetGuard, BudgetUpdateSchema, budgetOf } from './budget';
import { spendOf, withCall } from './spend';
import { repeatedCallOutcome, withTurnTimeout } from './turn-limits';
import { SessionLog, type NewSessionEvent, type SessionEvent } from './session-log';
import { settingsInForce } from './session-settings';
import { toolActivityOptions } from './tools/activity-options';
import { BUILTIN_TOOLS, idempotencyKey, prepareToolCall, toolSpecs } from './tools/registry';
import { McpSessionTools } from './tools/mcp-session';
import { approvalRequiredFor } from './tools/approval-patterns';
import type { ToolActivities, ToolOutcome } from './tools/tool-outcome';
import { ApprovalGate } from './approval-gate';
import { isPayloadsTooLarge } from './failure';
import { repairOpenTail } from './repair';
import { runTurn, type TurnRuntime } from './turn';
import { TurnTraces } from './trace-spans';
import { WORKFLOW_ERROR_TYPES } from './errors';

const llm = proxyActivities<LlmActivities>({
  startToCloseTimeout: '10 minutes',
  // A lost worker is noticed within this; the activity heartbeats every few seconds even
  // while the provider is silent (see activities/llm/activity.ts).
  heartbeatTimeout: '20 seconds',
  // The workflow learns of a cancellation's outcome only when the activity has closed its
  // request, so nothing of a cancelled stream outlives the turn.
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});
const tools = proxyActivities<ToolActivities>({
  startToCloseTimeout: '1 minute',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

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
  let spend = spendOf(log.events, config.fork?.carriedSpend);
  const enabledTools = config.tools ? BUILTIN_TOOLS.filter((t) => config.tools?.includes(t.name)) : BUILTIN_TOOLS;
  const settings: LlmSettings = {
    ...(config.system === undefined ? {} : { system: config.system }),
    tools: toolSpecs(enabledTools),
    maxTokens: config.maxTokens,
    reasoning: config.reasoning,
    // The session id keys OpenAI's prompt cache: every step of a session shares its prefix.
    ...(config.promptCache ? { promptCacheKey: workflowId } : {}),
  };
  // A copy: sink calls leave the workflow when its activation ends, and the log may have
  // grown by then.
  logMirror.opened(settings, [...log.events]);
  // Mirrored in one sink call when an LLM call is scheduled, the only time the copy must be
  // current, rather than one call (and one copy of workflowInfo) per event.
  const unmirrored: SessionEvent[] = [];

  // A carried `null` is the user's "no retries" and must survive continue-as-new, so only
  // an absent `continued` falls back to the input's policy (`??` would read `null` as absent).
  let retryPolicy: SessionRetryPolicy | 'default' = config.continued
    ? config.continued.retryPolicy
    : config.retryPolicy === undefined
      ? 'default'
      : config.retryPolicy;
  const livePolicy = (): SessionRetryPolicy => (retryPolicy === 'default' ? DEFAULT_RETRY_POLICY : retryPolicy);

  const queue: { turn: number; text: string }[] = [];
  // Turns closed in an earlier run (or in the session forked from) answer `awaitTurn` too.
  const outcomes = new Map<number, TurnOutcome>(
    log.events.flatMap((e) =>
      e.type === 'turn/end'
        ? [[e.turn, { turn: e.turn, status: e.status === 'interrupted' ? 'failed' : e.status, ...(e.reason ? { reason: e.reason } : {}), ...(e.failure ? { failure: e.failure } : {}) }] as const]
        : [],
    ),
  );
  let nextTurn = Math.max(0, ...log.events.map((e) => ('turn' in e ? e.turn : 0))) + 1;
  let turnsRun = config.continued?.turnsRun ?? 0;
  let current: { turn: number; scope: CancellationScope } | undefined;
  let endRequested = false;
  const state: Pick<SessionState, 'phase' | 'step'> = { phase: 'idle', step: 0 };
  let stepsTaken = log.events.filter((e) => e.type === 'step/start').length;
  let lastTurnFailed = false;

  const approvals = new ApprovalGate(config.approvalTimeoutMs);
  const budget = new BudgetGuard(config.continued?.budget ?? budgetOf(config), approvals);
  const mcpTools = new McpSessionTools(config.mcp ?? [], () => log.events, (event) => runtime.append(event));

  const publishStatus = () =>
    upsertSearchAttributes([
      { key: AgentStatus, value: current ? 'running' : endRequested ? 'ended' : lastTurnFailed ? 'failed' : 'idle' },
      { key: AgentStepCount, value: stepsTaken },
      // Only once a priced call has cost something: sessions without one upsert what they always did.
      ...(spend.costUsd ? [{ key: AgentCostUsd, value: spend.costUsd }] : []),
    ]);
  upsertSearchAttributes([{ key: AgentModel, value: config.model }]);
  publishStatus();

  const turnFailure = (outcome: TurnOutcome) =>
    ApplicationFailure.create({
      type: outcome.failure?.type ?? WORKFLOW_ERROR_TYPES.internal,
      message: `turn ${outcome.turn} ${outcome.status}: ${outcome.failure?.message ?? 'no reason recorded'}`,
      nonRetryable: true,
      details: [outcome],
    });
  const awaitOutcome = async (turn: number): Promise<TurnOutcome> => {
    await condition(() => outcomes.has(turn));
    const outcome = outcomes.get(turn) as TurnOutcome;
    if (outcome.status !== 'completed') throw turnFailure(outcome);
    return outcome;
  };

  const turnTraces = new TurnTraces();
  setHandler(
    sendUpdate,
    async (message) => {
      const turn = nextTurn++;
      turnTraces.requested(turn);
      queue.push({ turn, text: message.text });
      return awaitOutcome(turn);
    },
    {
      validator: (message) => {
        parseOrThrow(SendMessageSchema, message, 'message');
        if (endRequested) throw new Error('the session is ending and accepts no more messages');
      },
    },
  );
  setHandler(awaitTurnUpdate, ({ turn }) => awaitOutcome(turn), {
    validator: (arg) => {
      if (!Number.isInteger(arg?.turn) || arg.turn < 1 || arg.turn >= nextTurn) throw new Error(`no turn ${String(arg?.turn)} in this session`);
    },
  });
  setHandler(cancelTurnUpdate, () => {
    if (!current) return { cancelled: false };
    current.scope.cancel();
    return { cancelled: true, turn: current.turn };
  });
  setHandler(
    setRetryPolicyUpdate,
    (update) => {
      retryPolicy = parseOrThrow(RetryPolicyUpdateSchema, update, 'retry policy');
      return livePolicy();
    },
    { validator: (update) => void parseOrThrow(RetryPolicyUpdateSchema, update, 'retry policy') },
  );
  setHandler(setBudgetUpdate, (update) => budget.set(parseOrThrow(BudgetUpdateSchema, update, 'budget')), {
    validator: (update) => void parseOrThrow(BudgetUpdateSchema, update, 'budget'),
  });
  setHandler(decideApprovalUpdate, (decision) => approvals.decide(decision), {
    validator: (decision) => approvals.assertKnown(parseOrThrow(ApprovalDecisionSchema, decision, 'approval decision').callId),
  });
  setHandler(endUpdate, () => {
    endRequested = true;
  });
  setHandler(logQuery, (options) => logPage(log.events, options?.fromSeq ?? 0, Math.min(options?.maxBytes ?? LOG_PAGE_BYTES, LOG_PAGE_BYTES)));
  setHandler(stateQuery, () => ({
    status: current ? 'running' : endRequested ? 'ended' : 'idle',
    model: config.model,
    ...(config.system === undefined ? {} : { system: config.system }),
    turn: current?.turn ?? nextTurn - 1,
    step: state.step,
    stepsTaken,
    phase: state.phase,
    queued: queue.length,
    retryPolicy,
    pendingApprovals: approvals.pending(),
    events: log.length,
    runs: config.continued?.runs ?? 1,
    ...(config.fork ? { forkedFrom: { workflowId: config.fork.fromWorkflowId, atSeq: config.fork.atSeq } } : {}),
    settings: settingsInForce(config),
    spend,
    budget: budget.budget,
  }));
  setHandler(llmSettingsQuery, () => settings);
  setHandler(refreshToolsUpdate, () => mcpTools.refresh(), {
    validator: () => {
      if (mcpTools.servers.length === 0) throw new Error('this session uses no MCP server (start it with --mcp NAME)');
    },
  });
  setHandler(retryPolicyQuery, livePolicy);

  const runtime: TurnRuntime = {
    model: config.model,
    maxSteps: config.maxSteps,
    toolConcurrency: config.toolConcurrency,
    append: (event: NewSessionEvent) => {
      if (event.type === 'step/start') {
        stepsTaken++;
        state.step = event.step;
        publishStatus();
      }
      if (event.type === 'assistant') spend = withCall(spend, event.message);
      const appended = log.append(event, Date.now());
      unmirrored.push(appended);
      return appended;
    },
    setPhase: (phase, step) => {
      state.phase = phase;
      state.step = step;
    },
    // MCP tools are listed (once) before the first LLM call that could offer them.
    admitLlmCall: (turn, step) => budget.admit(turn, step, () => spend),
    stoppedBy: () => undefined,
    callLlm: (turn, step) => mcpTools.whenListed(() => {
      logMirror.appended(unmirrored.splice(0));
      return llm.callLlm.executeWithOptions(
        { summary: `step ${step} · llm ${config.model}`, retry: temporalRetryPolicyFor(livePolicy()) },
        [{ sessionId: workflowId, turn, step, model: config.model, uptoSeq: log.length, logDigest: log.digest, retryPolicy: livePolicy() }],
      );
    }),
    prepare: (call): ScheduledCall => {
      const repeated = repeatedCallOutcome(log.events, call, config.maxRepeats);
      if (repeated) return { kind: 'answer', call, outcome: repeated };
      const prepared = prepareToolCall(call, [...enabledTools, ...mcpTools.definitions()]);
      if (prepared.kind === 'invalid') return { kind: 'answer', call, outcome: { code: 'error', content: prepared.content } };
      const needsApproval =
        prepared.toolClass === 'side_effecting' && approvalRequiredFor(config.approvalRequired, call.name);
      return { kind: 'dispatch', call: { ...call, input: prepared.input as ToolCall['input'] }, toolClass: prepared.toolClass, needsApproval };
    },
    dispatchTool: (turn, step, call, toolClass) => {
      if (mcpTools.owns(call.name)) return keepWithinPayloadLimit(mcpTools.dispatch(step, call, toolClass));
      const tool = enabledTools.find((t) => t.name === call.name);
      if (!tool) throw new Error(`tool ${call.name} vanished between preparation and dispatch`);
      const timeout = config.toolTimeouts[call.name];
      const options = {
        ...toolActivityOptions(tool, toolClass),
        ...(timeout === undefined ? {} : { startToCloseTimeout: timeout }),
        summary: `step ${step} · tool ${call.name} #${call.id}`,
      };
      const request = {
        name: call.name,
        input: call.input,
        callId: call.id,
        ...(toolClass === 'side_effecting' ? { idempotencyKey: idempotencyKey(workflowId, call.id) } : {}),
      };
      return keepWithinPayloadLimit(tools.runTool.executeWithOptions(options, [request]));
    },
    awaitApproval: (turn, step, call) => approvals.request(turn, step, call),
  };

  const historyIsLong = () => {
    const info = workflowInfo();
    return info.continueAsNewSuggested || (config.continueAsNewAfterEvents !== undefined && info.historyLength >= config.continueAsNewAfterEvents);
  };

  try {
    let endedBy: SessionResult['endedBy'] = 'request';
    for (;;) {
      if (queue.length === 0 && !endRequested && historyIsLong()) {
        // Only between turns, and only once every Update handler has finished: an Update
        // accepted by this run must be answered by this run. A message arriving meanwhile
        // is run here first.
        await condition(() => allHandlersFinished() || queue.length > 0 || endRequested);
        if (queue.length === 0 && !endRequested) {
          const next: SessionInput = {
            ...input,
            // Keeps where the session was forked from; its events are part of the log now.
            fork: config.fork && { ...config.fork, events: [] },
            continued: { events: [...log.events], retryPolicy, turnsRun, runs: (config.continued?.runs ?? 1) + 1, budget: budget.budget },
          };
          assertCarriable(next);
          // A versioned worker (AGENT_DEPLOYMENT_NAME) runs sessions Pinned to its version, so
          // a deploy never replays a running session on new code; here, between runs, is where
          // a session moves: the next run starts on the deployment's current version.
          // Unversioned workers ignore it.
          await makeContinueAsNewFunc<typeof agentSession>({ initialVersioningBehavior: 'AUTO_UPGRADE' })(next);
        }
      }
      const woke = await condition(() => queue.length > 0 || endRequested, config.idleTimeoutMs, { summary: 'idle timeout' });
      const next = queue.shift();
      if (next) {
        current = { turn: next.turn, scope: new CancellationScope() };
        publishStatus();
        const scope = current.scope;
        const outcome = await turnTraces.run(next.turn, () =>
          withTurnTimeout(config.turnTimeoutMs, scope, (stoppedBy) => runTurn({ ...runtime, stoppedBy }, next.turn, next.text, scope)),
        );
        current = undefined;
        state.phase = 'idle';
        turnsRun++;
        lastTurnFailed = outcome.status !== 'completed';
        outcomes.set(next.turn, outcome);
        publishStatus();
        continue;
      }
      if (!woke) endedBy = 'idle_timeout';
      break;
    }
    endRequested = true;
    publishStatus();
    await condition(allHandlersFinished);
    return { turns: turnsRun, stepsTaken, endedBy, usage: usageOf(log.events), spend };
  } finally {
    // Ended, failed or continued as new: nothing will read this run's copy of the log.
    logMirror.closed();
  }
}

/** A tool ran, and its answer is above Temporal's payload limit: tell the model, and go on. */
function keepWithinPayloadLimit(running: Promise<ToolOutcome>): Promise<ToolOutcome> {
  return running.catch((error: unknown) => {
    if (!isPayloadsTooLarge(error)) throw error;
    return {
      code: 'error' as const,
      content: "The call ran, but its result was larger than Temporal's 2 MiB payload limit and was dropped. Ask for less (a range, a summary, a smaller page).",
    };
  });
}

function parseInput(input: SessionInput): SessionConfig {
  const parsed = SessionInputSchema.safeParse(input);
  if (!parsed.success) {
    // Non-retryable: a workflow task retried forever on bad input helps nobody.
    throw ApplicationFailure.create({ type: WORKFLOW_ERROR_TYPES.invalidInput, message: `invalid session input: ${describeIssues(parsed.error)}`, nonRetryable: true });
  }
  const config = parsed.data;
  // The default step limit was 10. A session started with that default must replay with
  // it: a turn its history ends at step 10 would otherwise schedule an 11th LLM call.
  if (input.maxSteps === undefined && !patched(MAX_STEPS_DEFAULT_RAISED)) config.maxSteps = EARLIER_MAX_STEPS_DEFAULT;
  return config;
}

const MAX_STEPS_DEFAULT_RAISED = 'max-steps-default-50';
const EARLIER_MAX_STEPS_DEFAULT = 10;

/**
 * The log travels to the next run as workflow input, and Temporal refuses a payload above
 * 2 MiB (a refused continue-as-new would fail the workflow task again and again). A log that large is also several hundred thousand tokens, past every provider's
 * context window. So the session ends here, clearly, rather than growing its history
 * until Temporal terminates it at the history limit; its log stays readable and can be
 * forked from an earlier event.
 */
const MAX_CARRIED_LOG_BYTES = 1.5 * 1024 * 1024;

function assertCarriable(next: SessionInput): void {
  const bytes = jsonBytes(next);
  if (bytes <= MAX_CARRIED_LOG_BYTES) return;
  throw ApplicationFailure.create({
    type: WORKFLOW_ERROR_TYPES.tooLarge,
    message: `the session's state is ${(bytes / 1024 / 1024).toFixed(1)} MiB, more than the ${MAX_CARRIED_LOG_BYTES / 1024 / 1024} MiB one run can carry into the next; fork it from an earlier event (\`fork --at\`) to go on`,
    nonRetryable: true,
  });
}
