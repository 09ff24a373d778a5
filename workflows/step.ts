import { PendingCallTracker } from './compensation';
import { isContextOverflow } from './context-compactor';
import { isCancellation, summarizeFailure } from './failure';
import { genAiRequestAttributes, genAiResponseAttributes, genAiSpanName } from '../contracts/gen-ai-attributes';
import type { AssistantMessage } from '../contracts/messages';
import { runToolCalls } from './scheduler';
import type { FailureSummary, NewSessionEvent } from '../contracts/session-log';
import { fallbackFailure, returnDue } from './model-fallback';
import type { Session } from './session-run';
import { currentTraceContext, inSpan, ToolSpans } from './trace-spans';

/**
 * One step, as a script: prepare the call, call the model, commit its answer, run the tools
 * it asked for. A step whose answer asks for no tools ends with that answer, which the turn
 * judges (an output schema may send it back).
 *
 * If anything fails after the assistant message is committed, every call it asked for gets
 * a result before the step is closed, so the conversation stays one a provider accepts
 * (the compensation block, workflows/compensation.ts): recorded but unanswered calls
 * get TOOL_OUTCOME_UNKNOWN, calls never recorded get TOOL_NOT_STARTED, recorded results
 * stay as they are. Then step/end records the failure and the original error propagates.
 */
export async function runStep(session: Session, turn: number, step: number, stoppedBy: () => FailureSummary | undefined): Promise<{ answer: AssistantMessage } | 'continue'> {
  const { state, tools } = session;
  returnWhenDue(session, turn, step);
  session.append({ type: 'step/start', turn, step, model: state.model });
  let tracker: PendingCallTracker | undefined;
  let toolSpans: ToolSpans | undefined;
  const append = (event: NewSessionEvent) => tracker?.observe(session.append(event));
  try {
    state.enteredPhase('llm', step);
    const preparing = prepareCall(session, turn, step);
    if (preparing) await preparing;
    const message = await callModel(session, turn, step);
    session.append({ type: 'assistant', turn, step, message });
    if (message.toolCalls.length === 0) {
      session.append({ type: 'step/end', turn, step, status: 'completed' });
      return { answer: message };
    }
    tracker = new PendingCallTracker(message);
    state.enteredPhase('tools', step);
    // Custom tools whose lane depends on the input get it from the worker first; a step
    // without such a call awaits nothing here, so its commands are what they always were.
    const deciding = tools.decideLanes(message.toolCalls);
    if (deciding) await deciding;
    const scheduled = message.toolCalls.map((call) => tools.prepare(call));
    const spans = (toolSpans = new ToolSpans(scheduled));
    await runToolCalls(scheduled, {
      concurrency: session.config.toolConcurrency,
      recordCall: (call) => append({ type: 'tool/call', turn, step, callId: call.id, name: call.name, input: call.input, ...tools.recordedWith(turn, step, call) }),
      recordResult: (call, outcome) => {
        append({ type: 'tool/result', turn, step, callId: call.id, name: call.name, ...outcome });
        spans.result(call.id, call.name, outcome.code);
      },
      dispatch: (call, toolClass) => spans.dispatch(call.id, call.name, () => tools.dispatch(turn, step, call, toolClass)),
      awaitApproval: (call) => {
        state.enteredPhase('approval', step);
        return session.approvals.request(turn, step, call).finally(() => state.enteredPhase('tools', step));
      },
    });
    session.append({ type: 'step/end', turn, step, status: 'completed' });
    return 'continue';
  } catch (error) {
    for (const result of tracker?.compensationResults() ?? []) {
      // A sub-agent stopped mid-call did spend what it last signalled: recorded, so a replay or the next run counts it too.
      const spend = state.childSpend(result.callId);
      append({ type: 'tool/result', turn, step, ...result, ...(spend ? { spend: { ...spend } } : {}) });
      toolSpans?.result(result.callId, result.name, result.code);
    }
    const stopped = isCancellation(error) ? stoppedBy() : undefined;
    session.append({ type: 'step/end', turn, step, status: isCancellation(error) && !stopped ? 'cancelled' : 'failed', failure: stopped ?? summarizeFailure(error) });
    throw error;
  }
}

/**
 * Before the step's LLM call: the budget admits it (a soft limit may wait for a human), the
 * MCP tools it offers are in the log, and the context is compacted when the request is due.
 * A promise only for what waits: awaiting three settled promises cost each step about as
 * many promises as its script added since 176fb59, each of which the SDK's promise hook gives
 * a stack trace (bench/README.md). It issues the same commands in the same order, which
 * every golden history replaying proves, so it needs no patch.
 */
function prepareCall(session: Session, turn: number, step: number): Promise<void> | undefined {
  const admitting = session.budget.admitting(turn, step);
  return admitting ? admitting.then(() => listAndCompact(session, turn, step)) : listAndCompact(session, turn, step);
}

/** MCP tools are listed (once) before the first LLM call that could offer them, and before a compaction, whose request offers them too. */
function listAndCompact(session: Session, turn: number, step: number): Promise<void> | undefined {
  const listing = session.mcpTools.listOnce();
  return listing ? listing.then(() => session.compactor.beforeStep(turn, step)) : session.compactor.beforeStep(turn, step);
}

/**
 * A session on a fallback goes back to its first model before a step when that is due
 * (model-fallback.ts), said in the log before the step/start that names the model.
 */
function returnWhenDue(session: Session, turn: number, step: number): void {
  const { state, config } = session;
  if (!returnDue(state.modelInForce, step, config.fallbackReturnAfterMs, Date.now())) return;
  session.append({ type: 'model/switched', turn, step, from: state.model, to: config.model, why: 'return' });
  state.returnedToFirstModel();
}

/**
 * The step's LLM call; the provider's own count may say the request is too long: then
 * compact, and try once more. A call that fails on the provider's side (model-fallback.ts)
 * goes, in the same step, to the session's next model, until one answers or the last one
 * fails: nothing of the step was committed before its answer, so nothing is undone.
 *
 * The first call is awaited as it always was, so a session that never falls back resolves
 * its step after the same microtasks (and issues the same commands) as before fallbacks.
 */
async function callModel(session: Session, turn: number, step: number): Promise<AssistantMessage> {
  for (let after: FailureSummary | undefined; ; ) {
    try {
      return await llmCall(session, turn, step, after);
    } catch (failure) {
      let error = failure;
      // A policy change cancelled the call: it goes on, scheduled again (llm-call-schedules.ts).
      if (session.llmCalls.cancelledForPolicy(error)) {
        try {
          return await session.llmCalls.answer(session.llmCalls.again(error));
        } catch (again) {
          error = again;
        }
      }
      if (isContextOverflow(error) && (await session.compactor.afterOverflow(turn, step))) {
        try {
          return await llmCall(session, turn, step, after);
        } catch (compacted) {
          error = compacted;
        }
      }
      after = switchedForFallback(session, turn, step, error);
    }
  }
}

/** The next model takes the step over after `error`, recorded in the log; else `error` is thrown, as the step fails with it. */
function switchedForFallback(session: Session, turn: number, step: number, error: unknown): FailureSummary {
  const { state } = session;
  const to = state.nextModel();
  const failure = to === undefined ? undefined : fallbackFailure(error);
  if (to === undefined || failure === undefined) throw error;
  session.append({ type: 'model/switched', turn, step, from: state.model, to, why: 'fallback', failure });
  state.switchedModel(Date.now());
  return failure;
}

/**
 * One LLM call with the log as it is now, to the model in force, in a span of its own;
 * Temporal's interceptor adds one per attempt under it. A call after a fallback says so in
 * its summary (the UI's activity list shows which model answered and why).
 */
function llmCall(session: Session, turn: number, step: number, after: FailureSummary | undefined): Promise<AssistantMessage> {
  const { state, log } = session;
  const { model } = state;
  const summary = `step ${step} · llm ${model}${after ? ` · fallback after ${after.type}` : ''}`;
  return inSpan(
    genAiSpanName(model),
    genAiRequestAttributes(model),
    currentTraceContext(),
    () => session.callLlm(summary, { turn, step, uptoSeq: log.nextSeq, logDigest: log.digest }),
    (reply) => genAiResponseAttributes(model, reply),
  );
}
