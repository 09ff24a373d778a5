import { CancellationScope } from '@temporalio/workflow';
import type { TurnOutcome } from '../contracts/api';
import { PendingCallTracker } from './compensation';
import { isCancellation, summarizeFailure } from './failure';
import type { AssistantMessage, ToolCall } from '../contracts/messages';
import { runToolCalls, type ScheduledCall } from './scheduler';
import type { FailureSummary, NewSessionEvent, SessionEvent } from '../contracts/session-log';
import type { ToolClass } from '../contracts/tools/tool-definition';
import type { ToolOutcome } from '../contracts/tools/tool-outcome';
import { genAiRequestAttributes, genAiResponseAttributes, genAiSpanName } from '../contracts/gen-ai-attributes';
import { currentTraceContext, inSpan, ToolSpans } from './trace-spans';

/** What a turn needs from its session: the log, the activities, and the session's settings. */
export interface TurnRuntime {
  model: string;
  maxSteps: number;
  toolConcurrency: number;
  append(event: NewSessionEvent): SessionEvent;
  setPhase(phase: 'llm' | 'tools' | 'approval', step: number): void;
  /** Why the turn was stopped from outside when that was not a `cancel` (its time limit), else undefined. */
  stoppedBy(): FailureSummary | undefined;
  /** Resolves when the session's budget allows the next LLM call; throws `budget_exceeded` when it does not. */
  admitLlmCall(turn: number, step: number): Promise<void>;
  callLlm(turn: number, step: number): Promise<AssistantMessage>;
  prepare(call: ToolCall): ScheduledCall;
  dispatchTool(turn: number, step: number, call: ToolCall, toolClass: ToolClass): Promise<ToolOutcome>;
  awaitApproval(turn: number, step: number, call: ToolCall): Promise<ToolOutcome | undefined>;
}

/**
 * Runs one turn in its own cancellation scope and always closes it in the log. A failed
 * or cancelled turn resolves with its failure rather than rejecting: the session outlives
 * it, and the `send` Update reports it.
 */
export async function runTurn(rt: TurnRuntime, turn: number, text: string, scope: CancellationScope): Promise<TurnOutcome> {
  rt.append({ type: 'turn/start', turn, text });
  try {
    const reason = await scope.run(async () => {
      for (let step = 1; step <= rt.maxSteps; step++) {
        const ended = await inSpan(`step ${step}`, { 'agent.turn': turn, 'agent.step': step }, currentTraceContext(), () => runStep(rt, turn, step));
        if (ended === 'answered') return 'answered' as const;
      }
      return 'step_limit' as const;
    });
    rt.append({ type: 'turn/end', turn, status: 'completed', reason });
    return { turn, status: 'completed', reason };
  } catch (error) {
    const stopped = isCancellation(error) ? rt.stoppedBy() : undefined;
    const failure = stopped ?? summarizeFailure(error);
    const status = isCancellation(error) && !stopped ? 'cancelled' : 'failed';
    rt.append({ type: 'turn/end', turn, status, failure });
    return { turn, status, failure };
  }
}

/**
 * One step: the LLM call, the committed assistant message, then its tool calls.
 *
 * If anything fails after the assistant message is committed, every call it asked for gets
 * a result before the step is closed, so the conversation stays one a provider accepts
 * (the compensation block, workflows/compensation.ts): recorded but unanswered calls
 * get TOOL_OUTCOME_UNKNOWN, calls never recorded get TOOL_NOT_STARTED, recorded results
 * stay as they are. Then step/end records the failure and the original error propagates.
 */
async function runStep(rt: TurnRuntime, turn: number, step: number): Promise<'answered' | 'continue'> {
  rt.append({ type: 'step/start', turn, step, model: rt.model });
  let tracker: PendingCallTracker | undefined;
  let toolSpans: ToolSpans | undefined;
  const append = (event: NewSessionEvent) => tracker?.observe(rt.append(event));
  try {
    rt.setPhase('llm', step);
    await rt.admitLlmCall(turn, step);
    // One span per LLM call; Temporal's interceptor adds one per attempt under it.
    const message = await inSpan(genAiSpanName(rt.model), genAiRequestAttributes(rt.model), currentTraceContext(), () => rt.callLlm(turn, step), (reply) =>
      genAiResponseAttributes(rt.model, reply),
    );
    rt.append({ type: 'assistant', turn, step, message });
    if (message.toolCalls.length === 0) {
      rt.append({ type: 'step/end', turn, step, status: 'completed' });
      return 'answered';
    }
    tracker = new PendingCallTracker(message);
    rt.setPhase('tools', step);
    const scheduled = message.toolCalls.map((call) => rt.prepare(call));
    const spans = (toolSpans = new ToolSpans(scheduled));
    await runToolCalls(scheduled, {
      concurrency: rt.toolConcurrency,
      recordCall: (call) => append({ type: 'tool/call', turn, step, callId: call.id, name: call.name, input: call.input }),
      recordResult: (call, outcome) => {
        append({ type: 'tool/result', turn, step, callId: call.id, name: call.name, ...outcome });
        spans.result(call.id, call.name, outcome.code);
      },
      dispatch: (call, toolClass) => spans.dispatch(call.id, call.name, () => rt.dispatchTool(turn, step, call, toolClass)),
      awaitApproval: (call) => {
        rt.setPhase('approval', step);
        return rt.awaitApproval(turn, step, call).finally(() => rt.setPhase('tools', step));
      },
    });
    rt.append({ type: 'step/end', turn, step, status: 'completed' });
    return 'continue';
  } catch (error) {
    for (const result of tracker?.compensationResults() ?? []) {
      append({ type: 'tool/result', turn, step, ...result });
      toolSpans?.result(result.callId, result.name, result.code);
    }
    const stopped = isCancellation(error) ? rt.stoppedBy() : undefined;
    rt.append({ type: 'step/end', turn, step, status: isCancellation(error) && !stopped ? 'cancelled' : 'failed', failure: stopped ?? summarizeFailure(error) });
    throw error;
  }
}
