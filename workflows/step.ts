import { PendingCallTracker } from './compensation';
import { isContextOverflow } from './context-compactor';
import { isCancellation, summarizeFailure } from './failure';
import { genAiRequestAttributes, genAiResponseAttributes, genAiSpanName } from '../contracts/gen-ai-attributes';
import type { AssistantMessage } from '../contracts/messages';
import { runToolCalls } from './scheduler';
import type { FailureSummary, NewSessionEvent } from '../contracts/session-log';
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
  session.append({ type: 'step/start', turn, step, model: session.config.model });
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
      recordCall: (call) => append({ type: 'tool/call', turn, step, callId: call.id, name: call.name, input: call.input }),
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
      append({ type: 'tool/result', turn, step, ...result });
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

/** The step's LLM call; the provider's own count may say the request is too long: then compact, and try once more. */
async function callModel(session: Session, turn: number, step: number): Promise<AssistantMessage> {
  try {
    return await llmCall(session, turn, step);
  } catch (failure) {
    let error = failure;
    // A policy change cancelled the call: it goes on, scheduled again (llm-call-schedules.ts).
    if (session.llmCalls.cancelledForPolicy(error)) {
      try {
        return await session.llmCalls.answer(session.llmCalls.again(error));
      } catch (after) {
        error = after;
      }
    }
    if (!isContextOverflow(error) || !(await session.compactor.afterOverflow(turn, step))) throw error;
    return await llmCall(session, turn, step);
  }
}

/** One LLM call with the log as it is now, in a span of its own; Temporal's interceptor adds one per attempt under it. */
function llmCall(session: Session, turn: number, step: number): Promise<AssistantMessage> {
  const { config, log } = session;
  return inSpan(
    genAiSpanName(config.model),
    genAiRequestAttributes(config.model),
    currentTraceContext(),
    () => session.callLlm(`step ${step} · llm ${config.model}`, { turn, step, uptoSeq: log.nextSeq, logDigest: log.digest }),
    (reply) => genAiResponseAttributes(config.model, reply),
  );
}
